-- The {limit} rows of {table} matching {scope} nearest to the vector parameter by cosine distance:
-- (id, embedding_model, session id ({session}), distance), nearest first.
-- A scope of up to the exact_max_rows parameter rows (one end user's memory, nearly always) is ranked
-- exactly from the B-tree on user_id ("+ 0": an ORDER BY the HNSW index cannot serve). A larger
-- scope uses the HNSW index, which filters after it visits hnsw.ef_search candidates and so may
-- return fewer than {limit} rows under a selective scope (pgvector README, "Filtering"); the exact
-- ranking then runs too.
WITH query AS (SELECT %(vector)s::vector AS v),
large AS (SELECT EXISTS (SELECT 1 FROM {table} WHERE {scope} OFFSET %(exact_max_rows)s) AS large),
by_index AS MATERIALIZED (
    SELECT id, embedding_model, {session} AS session_id, embedding <=> (SELECT v FROM query) AS distance
    FROM {table} WHERE {scope} AND embedding IS NOT NULL AND (SELECT large FROM large)
    ORDER BY embedding <=> (SELECT v FROM query) LIMIT {limit}
)
SELECT * FROM by_index WHERE (SELECT count(*) FROM by_index) >= {limit}
UNION ALL (
    SELECT id, embedding_model, {session} AS session_id, embedding <=> (SELECT v FROM query) AS distance
    FROM {table} WHERE {scope} AND embedding IS NOT NULL AND (SELECT count(*) FROM by_index) < {limit}
    ORDER BY (embedding <=> (SELECT v FROM query)) + 0, id LIMIT {limit}
)
ORDER BY distance, id
