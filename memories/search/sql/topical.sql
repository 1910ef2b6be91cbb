-- The rows of {table} matching {scope} that are nearer the topic parameter (a class centroid) than every
-- centroid of the classes parameter (a vector[]: every class, the topic's own among them), nearest first,
-- at most {limit}: (id, embedding_model, distance to the topic).
SELECT id, embedding_model, embedding <=> %(topic)s::vector AS distance
FROM {table}
WHERE {scope} AND embedding IS NOT NULL
  AND embedding <=> %(topic)s::vector <= ALL (SELECT embedding <=> c FROM unnest(%(classes)s::vector[]) AS c)
ORDER BY distance, id
LIMIT {limit}
