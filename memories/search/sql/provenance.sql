-- Where facts come from and what replaced them: for each message in the messages parameter raised into a fact
-- that a later one replaced ('replaced'), the fact that holds now when it is active (else NULL) and when it was
-- said; for each fact in the knowledge parameter, and each such active fact, the messages it was raised from
-- ('source'). Rows: (relation, knowledge id, message id, when).
WITH replaced AS (
    SELECT s.message_id, later.id AS later_id, later.status = 'active' AS later_active,
        COALESCE(later.said_at, later.created_at) AS replaced_at
    FROM memories_knowledge_source_messages AS s
    JOIN memories_knowledge AS fact ON fact.id = s.knowledge_id AND fact.status = 'superseded'
    JOIN memories_knowledge AS later ON later.id = fact.superseded_by_id
    WHERE s.message_id = ANY(%(messages)s)
)
SELECT 'source' AS relation, s.knowledge_id, s.message_id, NULL::timestamptz AS replaced_at
FROM memories_knowledge_source_messages AS s
WHERE s.knowledge_id = ANY(%(knowledge)s) OR s.knowledge_id IN (SELECT later_id FROM replaced WHERE later_active)
UNION ALL
SELECT 'replaced', CASE WHEN later_active THEN later_id END, message_id, replaced_at
FROM replaced
UNION ALL
-- For each fact in a one-value slot: the user's latest later turn that spoke of that slot ('changed'), when
-- it raised no fact of its own there (the reader could not read its value); when it was said.
SELECT 'changed', fact.id, later.id, later.created_at
FROM memories_knowledge AS fact
CROSS JOIN LATERAL (
    SELECT m.id, m.created_at
    FROM memories_message AS m
    WHERE m.user_id = fact.user_id AND m.slot = fact.slot AND m.slot <> ''
        AND m.created_at > COALESCE(fact.said_at, fact.created_at)
        AND NOT EXISTS (
            SELECT 1 FROM memories_knowledge_source_messages AS s
            JOIN memories_knowledge AS raised ON raised.id = s.knowledge_id AND raised.slot = fact.slot
            WHERE s.message_id = m.id
        )
    ORDER BY m.created_at DESC, m.id DESC
    LIMIT 1
) AS later
WHERE fact.id = ANY(%(knowledge)s) AND fact.slot <> '' AND fact.user_id IS NOT NULL
