-- For each message in the ids parameter: the parts of its content that best match the words of the query
-- parameter (PostgreSQL's ts_headline, its fragments joined by " … "), as (id, excerpt). The query's words
-- are taken as bm25.sql takes them: any term, stemmed, stop words dropped. The options parameter sizes it;
-- at most max_chars characters of a message are read, whatever is stored.
SELECT id, ts_headline(
    'english',
    left(content, %(max_chars)s),
    regexp_replace(plainto_tsquery('english', %(query)s)::text, ' (&|<(-|[0-9]+)>) ', ' | ', 'g')::tsquery,
    %(options)s
)
FROM memories_message
WHERE id = ANY(%(ids)s)
