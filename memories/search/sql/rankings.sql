-- Every ranking a search fuses, in one statement, with what fusion and the hits need of each candidate:
-- (kind, id, found_by_vector, words_place, distance, embedding_model, session_id, before_id, after_id).
-- by_vector: each kind's nearest rows ({by_vector}: nearest.sql per kind); by_words: BM25 over the
-- messages ({by_words}: bm25.sql); by_entity: the messages the entity_messages parameter names.
-- A message's distance is computed here when only its words found it (NULL while it has no vector);
-- before_id / after_id are the turns just before and after it in its session, by (created_at, id).
WITH query AS (SELECT %(vector)s::vector AS v),
by_vector AS MATERIALIZED ({by_vector}),
by_words AS MATERIALIZED ({by_words}),
by_entity AS (SELECT DISTINCT 'message' AS kind, id FROM unnest(%(entity_messages)s::bigint[]) AS id),
candidates AS (
    SELECT kind, id, v.distance, v.embedding_model, w.place AS words_place
    FROM by_vector AS v FULL JOIN by_words AS w USING (kind, id) FULL JOIN by_entity USING (kind, id)
)
SELECT c.kind, c.id, c.distance IS NOT NULL AS found_by_vector, c.words_place,
       coalesce(c.distance, m.embedding <=> (SELECT v FROM query)) AS distance,
       coalesce(c.embedding_model, m.embedding_model) AS embedding_model,
       coalesce(m.session_id, s.session_id) AS session_id,
       (SELECT b.id FROM memories_message AS b
        WHERE b.session_id = m.session_id AND b.created_at <= m.created_at AND (b.created_at, b.id) < (m.created_at, m.id)
        ORDER BY b.created_at DESC, b.id DESC LIMIT 1) AS before_id,
       (SELECT a.id FROM memories_message AS a
        WHERE a.session_id = m.session_id AND a.created_at >= m.created_at AND (a.created_at, a.id) > (m.created_at, m.id)
        ORDER BY a.created_at, a.id LIMIT 1) AS after_id
FROM candidates AS c
LEFT JOIN memories_message AS m ON c.kind = 'message' AND m.id = c.id
LEFT JOIN memories_summary AS s ON c.kind = 'summary' AND s.id = c.id
