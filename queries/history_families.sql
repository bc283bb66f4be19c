-- history_families: the kernel families `tracehouse history --family`
-- accepts: every family the classifier knows (family_categories), every
-- family a stored kernel name carries, and 'unclassified' (names without
-- one, as history_steps.sql counts them).
-- Parameters: none.
-- Columns: family. Sorted by family.
SELECT family FROM family_categories
UNION
SELECT family FROM kernel_names WHERE family IS NOT NULL
UNION
SELECT 'unclassified'
ORDER BY family
