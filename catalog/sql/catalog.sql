-- The catalog: merging batches, rule sets, lookups, retention and size.
-- A file's segments are parallel arrays sorted by part (docs/catalog.md).

-- name: newest_rule_version
SELECT max(version) AS version FROM rule_set_version;

-- name: rule_set_of_version
SELECT rules FROM rule_set_version WHERE version = %(version)s;

-- name: category_rules_of_version
SELECT categories FROM rule_set_version WHERE version = %(version)s;

-- name: publish_rule_set
-- The next version number; two publishers at once collide on the unique
-- version and the loser retries.
-- Category rules given as NULL carry over those of the version before.
INSERT INTO rule_set_version (version, rules, categories, created_at, created_by, note)
SELECT coalesce(max(version), 0) + 1, %(rules)s::jsonb,
       coalesce(%(categories)s::jsonb,
                (SELECT categories FROM rule_set_version ORDER BY version DESC LIMIT 1)),
       now(), %(created_by)s, %(note)s
  FROM rule_set_version
RETURNING id, version;

-- name: group_name
SELECT name FROM news_group WHERE id = %(group_id)s;

-- name: merge_files
-- One statement merges a whole batch. Each list parameter holds one element
-- per catalog file, already deduplicated by key and sorted by key (so two
-- batches lock shared rows in the same order and cannot deadlock). The
-- segments of all files travel end to end in three integer arrays sent in
-- binary, which each file slices at firsts..lasts; a file's message-ids
-- travel as space-separated text (message-ids hold no whitespace).
--
-- A new key inserts. An existing key merges under the row lock ON CONFLICT
-- takes, so concurrent batches serialize per file and lose nothing: the
-- segment set is keyed by part, the stored segment of a part wins, any other
-- message-id for it is remembered in conflict_ids (so a replay counts it
-- once). The WHERE skips the write when the batch brings nothing new (a
-- replay): no dead tuple, and the file does not count as stored. The subject
-- kept is the one reported with the lowest first part (ties: the smaller
-- text), which makes the result independent of arrival order.
WITH incoming AS (
    SELECT i.key, i.release_key, i.release_id, i.subject, i.poster, i.name, i.file_index, i.file_count,
           i.total, to_timestamp(i.date) AS date, i.bytes,
           (%(parts)s::int[])[i.first:i.last] AS parts,
           (%(articles)s::bigint[])[i.first:i.last] AS articles,
           (%(sizes)s::int[])[i.first:i.last] AS sizes,
           string_to_array(i.message_ids, ' ') AS message_ids,
           coalesce(string_to_array(nullif(i.conflict_ids, ''), ' '), '{}') AS conflict_ids
      FROM unnest(%(keys)s::bytea[], %(release_keys)s::bytea[], %(release_ids)s::bigint[],
                  %(subjects)s::text[],
                  %(posters)s::text[], %(names)s::text[], %(file_indexes)s::int[],
                  %(file_counts)s::int[], %(totals)s::int[], %(dates)s::bigint[],
                  %(bytes)s::bigint[], %(firsts)s::int[], %(lasts)s::int[],
                  %(message_ids)s::text[], %(conflict_ids)s::text[])
           AS i(key, release_key, release_id, subject, poster, name, file_index, file_count, total, date,
                bytes, first, last, message_ids, conflict_ids)
), written AS (
    INSERT INTO catalog_file AS f (
        group_id, key, release_key, release_id, rule_version, subject, poster, name, file_index,
        file_count, total, date, parts, articles, sizes, message_ids, conflict_ids, segments, bytes,
        complete, conflicts, created_at, updated_at)
    SELECT %(group_id)s, key, release_key, release_id, %(rule_version)s, subject, poster, name, file_index,
           file_count, total, date, parts, articles, sizes, message_ids, conflict_ids,
           cardinality(parts), bytes, cardinality(parts) = total, cardinality(conflict_ids),
           now(), now()
      FROM incoming
     ORDER BY key
    ON CONFLICT (group_id, key) DO UPDATE
       SET (parts, articles, sizes, message_ids, conflict_ids, segments, bytes, complete,
            conflicts) = (
            -- Fast paths (fragments of one file from neighbouring ranges): the
            -- batch's parts all follow, or all precede, the stored ones, so the
            -- arrays just concatenate. The WHERE clauses only read the row and
            -- the batch, so the branches not taken never run.
            SELECT f.parts || excluded.parts, f.articles || excluded.articles,
                   f.sizes || excluded.sizes, f.message_ids || excluded.message_ids,
                   f.conflict_ids, f.segments + cardinality(excluded.parts),
                   f.bytes + excluded.bytes,
                   f.segments + cardinality(excluded.parts) = f.total, f.conflicts
             WHERE excluded.parts[1] > f.parts[cardinality(f.parts)]
               AND cardinality(excluded.conflict_ids) = 0
            UNION ALL
            SELECT excluded.parts || f.parts, excluded.articles || f.articles,
                   excluded.sizes || f.sizes, excluded.message_ids || f.message_ids,
                   f.conflict_ids, f.segments + cardinality(excluded.parts),
                   f.bytes + excluded.bytes,
                   f.segments + cardinality(excluded.parts) = f.total, f.conflicts
             WHERE excluded.parts[cardinality(excluded.parts)] < f.parts[1]
               AND cardinality(excluded.conflict_ids) = 0
            UNION ALL
            -- The general merge: the stored segment of a part wins (src 0), and
            -- every other message-id seen becomes a remembered conflict.
            SELECT kept_parts, kept_articles, kept_sizes, kept_ids, conflicted,
                   cardinality(kept_parts), kept_bytes, cardinality(kept_parts) = f.total,
                   cardinality(conflicted)
              FROM (
                SELECT merged.*,
                       ARRAY(SELECT x FROM (SELECT unnest(loose) EXCEPT SELECT unnest(kept_ids)) AS e(x)
                             ORDER BY x) AS conflicted
                  FROM (
                    SELECT array_agg(p ORDER BY p) FILTER (WHERE keep) AS kept_parts,
                           array_agg(a ORDER BY p) FILTER (WHERE keep) AS kept_articles,
                           array_agg(s ORDER BY p) FILTER (WHERE keep) AS kept_sizes,
                           array_agg(m ORDER BY p) FILTER (WHERE keep) AS kept_ids,
                           coalesce(array_agg(DISTINCT m) FILTER (WHERE NOT keep), '{}') AS loose,
                           sum(s) FILTER (WHERE keep) AS kept_bytes
                      FROM (
                        SELECT p, a, s, m,
                               p IS NOT NULL AND row_number() OVER (PARTITION BY p ORDER BY src) = 1 AS keep
                          FROM (
                            SELECT o.p, o.a, o.s, o.m, 0 AS src
                              FROM unnest(f.parts, f.articles, f.sizes, f.message_ids) AS o(p, a, s, m)
                            UNION ALL
                            SELECT n.p, n.a, n.s, n.m, 1
                              FROM unnest(excluded.parts, excluded.articles, excluded.sizes,
                                          excluded.message_ids) AS n(p, a, s, m)
                            UNION ALL
                            SELECT NULL, NULL, NULL, c, 2
                              FROM unnest(f.conflict_ids || excluded.conflict_ids) AS c
                          ) AS u
                      ) AS ranked
                  ) AS merged
                OFFSET 0  -- computes `conflicted` once
              ) AS m
             WHERE NOT ((excluded.parts[1] > f.parts[cardinality(f.parts)]
                         OR excluded.parts[cardinality(excluded.parts)] < f.parts[1])
                        AND cardinality(excluded.conflict_ids) = 0)
           ),
           date = LEAST(f.date, excluded.date),
           subject = CASE WHEN (excluded.parts[1], excluded.subject) < (f.parts[1], f.subject)
                          THEN excluded.subject ELSE f.subject END,
           name = CASE WHEN (excluded.parts[1], excluded.subject) < (f.parts[1], f.subject)
                       THEN excluded.name ELSE f.name END,
           file_index = CASE WHEN (excluded.parts[1], excluded.subject) < (f.parts[1], f.subject)
                             THEN excluded.file_index ELSE f.file_index END,
           file_count = CASE WHEN (excluded.parts[1], excluded.subject) < (f.parts[1], f.subject)
                             THEN excluded.file_count ELSE f.file_count END,
           release_key = CASE WHEN (excluded.parts[1], excluded.subject) < (f.parts[1], f.subject)
                              THEN excluded.release_key ELSE f.release_key END,
           -- The release follows the subject kept; a file stored before it
           -- had one takes the batch's.
           release_id = CASE WHEN (excluded.parts[1], excluded.subject) < (f.parts[1], f.subject)
                               OR f.release_id IS NULL
                             THEN excluded.release_id ELSE f.release_id END,
           updated_at = now()
     WHERE excluded.parts[1] > f.parts[cardinality(f.parts)]
        OR excluded.parts[cardinality(excluded.parts)] < f.parts[1]
        OR NOT (excluded.message_ids || excluded.conflict_ids) <@ (f.message_ids || f.conflict_ids)
        OR excluded.date < f.date
        OR (excluded.parts[1], excluded.subject) < (f.parts[1], f.subject)
    RETURNING release_id
)
-- The releases of the files written: a release the batch created that none
-- joined is dropped after (drop_empty_releases), with no statement otherwise.
SELECT count(*) AS written, array_agg(DISTINCT release_id) AS releases FROM written;

-- name: files_by_message_id
-- The GIN index answers the hash; the text re-check drops hash collisions.
SELECT f.id
  FROM catalog_file AS f
 WHERE catalog_message_id_hashes(f.message_ids) @> ARRAY[hashtext(%(message_id)s)]
   AND %(message_id)s = ANY(f.message_ids)
 ORDER BY f.id;

-- name: release_file_ids
-- The files of the post `file_id` belongs to: the same release key, posted
-- within a day of it (a re-post of the same release later is another post).
SELECT r.id
  FROM catalog_file AS f
  JOIN catalog_file AS r
    ON r.release_key = f.release_key
   AND r.group_id = f.group_id
   AND r.date BETWEEN f.date - interval '1 day' AND f.date + interval '1 day'
 WHERE f.id = %(file_id)s
 ORDER BY r.file_index NULLS LAST, r.name, r.id
 LIMIT %(limit)s;

-- name: prune_cutoff
SELECT now() - make_interval(secs => %(seconds)s) AS cutoff;

-- name: prune_incomplete
-- One batch of incomplete files untouched since the cutoff; SKIP LOCKED
-- leaves files a batch is merging into right now alone, and files whose
-- release a batch holds (a batch locks its releases before its files, so
-- waiting for one here could deadlock; they go in a later run). The delete
-- trigger then recounts the releases this statement holds.
WITH candidates AS (
    SELECT id, release_id FROM catalog_file
     WHERE NOT complete AND updated_at < %(cutoff)s
     ORDER BY updated_at
     LIMIT %(limit)s
       FOR UPDATE SKIP LOCKED
), free AS (
    SELECT id FROM catalog_release
     WHERE id IN (SELECT release_id FROM candidates)
     ORDER BY id
       FOR UPDATE SKIP LOCKED
), doomed AS (
    SELECT c.id FROM candidates AS c
     WHERE c.release_id IS NULL OR c.release_id IN (SELECT id FROM free)
), gone AS (
    DELETE FROM catalog_file AS f USING doomed WHERE f.id = doomed.id
    RETURNING f.segments, f.bytes
)
SELECT count(*) AS files, coalesce(sum(segments), 0) AS segments, coalesce(sum(bytes), 0) AS bytes
  FROM gone;
