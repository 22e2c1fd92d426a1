-- What the schema-drift test compares (tests/core/test_schema_drift.py).

-- name: schema_objects
-- Every function, view and trigger of the public schema with its definition
-- as PostgreSQL prints it; extensions' own objects (pg_trgm's) left out.
SELECT 'function' AS kind, p.proname::text AS name, p.oid::regprocedure::text AS object,
       pg_get_functiondef(p.oid) AS definition
  FROM pg_proc AS p
  JOIN pg_namespace AS n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.prokind IN ('f', 'p')
   AND NOT EXISTS (SELECT 1 FROM pg_depend AS d
                    WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
UNION ALL
SELECT 'view', c.relname::text, c.oid::regclass::text, pg_get_viewdef(c.oid)
  FROM pg_class AS c
  JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE n.nspname = 'public' AND c.relkind = 'v'
   AND NOT EXISTS (SELECT 1 FROM pg_depend AS d
                    WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
UNION ALL
SELECT 'trigger', t.tgname::text, t.tgname || ' ON ' || c.oid::regclass::text,
       pg_get_triggerdef(t.oid)
  FROM pg_trigger AS t
  JOIN pg_class AS c ON c.oid = t.tgrelid
  JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE NOT t.tgisinternal AND n.nspname = 'public';
