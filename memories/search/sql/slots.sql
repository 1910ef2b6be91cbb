-- The rows of {table} matching {scope} whose slot's first word (before any ":" or space: "pet" of "pet:rex",
-- "sister" of "sister aiko:residence") is in the heads parameter, said last first, at most {limit}: (id).
SELECT id FROM {table}
WHERE {scope} AND split_part(split_part(slot, ':', 1), ' ', 1) = ANY(%(heads)s)
ORDER BY COALESCE(said_at, created_at) DESC, id DESC
LIMIT {limit}
