-- For each message in the ids parameter: its session and the turns just before and after it in that session.
SELECT id, session_id, prev_id, next_id FROM (
    SELECT id, session_id, LAG(id) OVER w AS prev_id, LEAD(id) OVER w AS next_id FROM memories_message
    WHERE session_id IN (SELECT session_id FROM memories_message WHERE id = ANY(%(ids)s))
    WINDOW w AS (PARTITION BY session_id ORDER BY created_at, id)
) AS ordered
WHERE id = ANY(%(ids)s)
