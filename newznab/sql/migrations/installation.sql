-- This installation's identity (migration 0005). Never edit a block a
-- migration has run: a change is a new block and a new migration.

-- name: create_installation
-- One row: a random UUID made when the database was, shared by every
-- coordinator host of this installation and kept by its backups. Release
-- guids carry it (newznab/guids.py), so two installations' guids differ;
-- it is no secret and derives from none.
CREATE TABLE newznab_installation (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    identity uuid NOT NULL DEFAULT gen_random_uuid()
);
INSERT INTO newznab_installation DEFAULT VALUES;

-- name: drop_installation
DROP TABLE newznab_installation;
