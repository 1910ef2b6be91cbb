-- Where facts come from and what replaced them: for each fact in the knowledge parameter, the messages it
-- was raised from ('source'); for each message in the messages parameter raised into a fact that a later
-- one replaced ('replaced'), when the later one was said. Rows: (relation, knowledge id, message id, when).
SELECT 'source' AS relation, s.knowledge_id, s.message_id, NULL::timestamptz AS replaced_at
FROM memories_knowledge_source_messages AS s
WHERE s.knowledge_id = ANY(%(knowledge)s)
UNION ALL
SELECT 'replaced', s.knowledge_id, s.message_id, COALESCE(later.said_at, later.created_at)
FROM memories_knowledge_source_messages AS s
JOIN memories_knowledge AS fact ON fact.id = s.knowledge_id AND fact.status = 'superseded'
JOIN memories_knowledge AS later ON later.id = fact.superseded_by_id
WHERE s.message_id = ANY(%(messages)s)
