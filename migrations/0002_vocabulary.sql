-- The closed relation vocabulary: seed 003's 39 relations. Every stored claim references a row
-- here by foreign key (ON DELETE RESTRICT), so the set is closed in the database, not just in
-- code. A unit test keeps these rows identical to streams/formation/vocabulary.py.
CREATE TABLE relation (
    position            integer NOT NULL UNIQUE,
    name                text PRIMARY KEY,
    semantic_type       text    NOT NULL,
    object_kind         text    NOT NULL CHECK (object_kind IN ('entity', 'value')),
    cardinality         text    NOT NULL CHECK (cardinality IN ('single', 'many')),
    is_event            boolean NOT NULL,
    belief_type         text    NOT NULL CHECK (belief_type IN
                            ('fact', 'preference', 'relationship', 'user_model_attr',
                             'procedure_pointer')),
    portability_ceiling text    NOT NULL CHECK (portability_ceiling IN
                            ('portable', 'contextual', 'local')),
    description         text    NOT NULL
);

INSERT INTO relation (position, name, semantic_type, object_kind, cardinality, is_event,
                      belief_type, portability_ceiling, description) VALUES
    (1, 'has_name', 'identity', 'value', 'single', false, 'user_model_attr', 'portable', 'the name the subject goes by'),
    (2, 'has_role', 'identity', 'value', 'single', false, 'user_model_attr', 'portable', 'job title or role the subject holds'),
    (3, 'works_at', 'identity', 'entity', 'many', false, 'user_model_attr', 'portable', 'organisation the subject works for'),
    (4, 'member_of', 'identity', 'entity', 'many', false, 'user_model_attr', 'portable', 'group, team or community the subject belongs to'),
    (5, 'lives_in', 'identity', 'entity', 'single', false, 'user_model_attr', 'portable', 'place the subject lives now'),
    (6, 'born_in', 'identity', 'entity', 'single', true, 'user_model_attr', 'portable', 'place the subject was born'),
    (7, 'speaks', 'identity', 'value', 'many', false, 'user_model_attr', 'portable', 'language the subject speaks'),
    (8, 'has_contact', 'identity', 'value', 'many', false, 'user_model_attr', 'portable', 'a way to reach the subject'),
    (9, 'has_timezone', 'identity', 'value', 'single', false, 'user_model_attr', 'portable', 'time zone the subject keeps'),
    (10, 'prefers', 'preference', 'value', 'many', false, 'preference', 'portable', 'something the subject prefers or likes'),
    (11, 'dislikes', 'preference', 'value', 'many', false, 'preference', 'portable', 'something the subject dislikes or avoids'),
    (12, 'interested_in', 'preference', 'value', 'many', false, 'preference', 'portable', 'topic the subject is interested in'),
    (13, 'knows_about', 'capability', 'value', 'many', false, 'user_model_attr', 'portable', 'subject area the subject knows well'),
    (14, 'uses', 'capability', 'entity', 'many', false, 'user_model_attr', 'portable', 'tool, product or technology the subject uses'),
    (15, 'learning', 'capability', 'value', 'many', false, 'user_model_attr', 'portable', 'skill or subject the subject is learning'),
    (16, 'intends_to', 'intent', 'value', 'many', false, 'fact', 'contextual', 'something the subject plans to do'),
    (17, 'committed_to', 'intent', 'value', 'many', false, 'fact', 'contextual', 'a decision or commitment the subject made'),
    (18, 'responsible_for', 'intent', 'entity', 'many', false, 'fact', 'contextual', 'work the subject is responsible for'),
    (19, 'blocked_by', 'intent', 'entity', 'many', false, 'fact', 'contextual', 'what is blocking the subject'),
    (20, 'knows', 'social', 'entity', 'many', false, 'relationship', 'contextual', 'a person the subject knows'),
    (21, 'works_with', 'social', 'entity', 'many', false, 'relationship', 'contextual', 'a person the subject works with'),
    (22, 'manages', 'social', 'entity', 'many', false, 'relationship', 'contextual', 'a person or team the subject manages'),
    (23, 'related_to', 'social', 'entity', 'many', false, 'relationship', 'contextual', 'family or personal relation; facet names it'),
    (24, 'owns', 'possession', 'entity', 'many', false, 'fact', 'contextual', 'something the subject owns or has'),
    (25, 'has_access_to', 'possession', 'entity', 'many', false, 'fact', 'contextual', 'system or resource the subject can use'),
    (26, 'part_of', 'structure', 'entity', 'many', false, 'fact', 'contextual', 'a whole the subject is part of'),
    (27, 'instance_of', 'structure', 'entity', 'single', false, 'fact', 'contextual', 'the kind of thing the subject is'),
    (28, 'located_in', 'structure', 'entity', 'single', false, 'fact', 'contextual', 'where a thing is located'),
    (29, 'depends_on', 'structure', 'entity', 'many', false, 'fact', 'contextual', 'something the subject depends on'),
    (30, 'same_as', 'structure', 'entity', 'many', false, 'fact', 'contextual', 'someone said two names are the same thing'),
    (31, 'created', 'authorship', 'entity', 'many', true, 'fact', 'contextual', 'something the subject made'),
    (32, 'contributed_to', 'authorship', 'entity', 'many', true, 'fact', 'contextual', 'work the subject contributed to'),
    (33, 'participated_in', 'authorship', 'entity', 'many', true, 'fact', 'contextual', 'event the subject took part in'),
    (34, 'occurred_on', 'temporal', 'value', 'single', true, 'fact', 'contextual', 'date an event happened'),
    (35, 'scheduled_for', 'temporal', 'value', 'single', false, 'fact', 'contextual', 'date something is scheduled'),
    (36, 'due_on', 'temporal', 'value', 'single', false, 'fact', 'contextual', 'date something is due'),
    (37, 'has_status', 'state', 'value', 'single', false, 'fact', 'contextual', 'current state or outcome of a task'),
    (38, 'requires', 'constraint', 'value', 'many', false, 'procedure_pointer', 'portable', 'a rule or step that must be followed'),
    (39, 'prohibits', 'constraint', 'value', 'many', false, 'procedure_pointer', 'portable', 'a rule against doing something');
