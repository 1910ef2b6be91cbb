-- For each message in the ids parameter: its session, the turn just before it and the two after it in that
-- session, what it does and what the turn after it does (dialogue acts: a question leads into its answer),
-- and who said it.
SELECT id, session_id, prev_id, next_id, next2_id, dialogue_act, next_act, role FROM (
    SELECT id, session_id, dialogue_act, role,
           LAG(id) OVER w AS prev_id, LEAD(id) OVER w AS next_id, LEAD(id, 2) OVER w AS next2_id,
           LEAD(dialogue_act) OVER w AS next_act
    FROM memories_message
    WHERE session_id IN (SELECT session_id FROM memories_message WHERE id = ANY(%(ids)s))
    WINDOW w AS (PARTITION BY session_id ORDER BY created_at, id)
) AS ordered
WHERE id = ANY(%(ids)s)
