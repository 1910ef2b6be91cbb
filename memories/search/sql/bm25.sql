-- BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009)
-- of the messages matching {scope} against the words of the query parameter: the {limit} best ids, best
-- first, ties by id. Terms are the lexemes of to_tsvector('english', query), made as the
-- messages' search_vector was (stemmed, stop words dropped).
WITH terms AS MATERIALIZED (
    SELECT array_agg(lexeme) AS lexemes,
           -- plainto_tsquery's lexemes joined by | (any term) instead of & and <->
           regexp_replace(plainto_tsquery('english', %(query)s)::text, ' (&|<(-|[0-9]+)>) ', ' | ', 'g')::tsquery
               AS any_term
    FROM unnest(to_tsvector('english', %(query)s))
),
scoped AS MATERIALIZED (SELECT id, search_vector, length(search_vector) AS dl FROM memories_message WHERE {scope}),
-- Each query term in each message holding any: its frequency there. @@ on the scoped rows rather
-- than through the GIN index, whose postings for a common word hold every other user's messages;
-- setweight + ts_filter keep only the query's lexemes before unnesting.
postings AS MATERIALIZED (
    SELECT s.id, s.dl, t.lexeme, coalesce(array_length(t.positions, 1), 1) AS tf
    FROM terms, scoped AS s, unnest(ts_filter(setweight(s.search_vector, 'A', terms.lexemes), '{{a}}')) AS t
    WHERE s.search_vector @@ terms.any_term AND t.lexeme = ANY (terms.lexemes)
),
-- Lucene's idf, positive even for a term most messages hold: ln(1 + (N - n + 0.5) / (n + 0.5)).
-- N as a scalar subquery, computed once.
idf AS (
    SELECT lexeme, ln(1 + ((SELECT count(*)::float8 FROM scoped) - df + 0.5) / (df + 0.5)) AS idf
    FROM (SELECT lexeme, count(*)::float8 AS df FROM postings GROUP BY lexeme) AS d
),
-- Length normalisation by the b parameter, a message's length being its distinct lexemes against the
-- scope's mean. Rounded so that messages holding the same terms tie whatever order the plan adds them in.
avgdl AS (SELECT greatest(avg(dl), 1)::float8 AS avgdl FROM scoped)
SELECT id FROM postings JOIN idf USING (lexeme), avgdl
GROUP BY id ORDER BY round(
    sum(idf * tf * (%(k1)s + 1) / (tf + %(k1)s * (1 - %(b)s + %(b)s * dl / avgdl.avgdl)))::numeric, 9
) DESC, id LIMIT {limit}
