-- classify: the kernel classifier's rules (classifier_rules and
-- family_categories, migration 0002 and later) as functions of a name.
--
-- Bulk classification is schema.Classify (schema/classify.sql), which
-- kernel_names.family / kernel_names.category hold for every name; these
-- macros answer for one name at a time, for ad hoc questions ("why did
-- this kernel get its family?").

-- kernel_call(kernel_name): the name without its final balanced
-- parenthesised group (the parameter list) and the blanks before it: what
-- the classifier's rules see (migration 0018: a parameter type must not
-- decide a family). The group may nest six deep (function pointer and
-- lambda types); a deeper one is left whole. A name that does not end in
-- `)` is returned as it is.
CREATE MACRO kernel_call(kernel_name) AS regexp_replace(kernel_name,
    ' *\((?:[^()]|\((?:[^()]|\((?:[^()]|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))*\))*\))*\)$', '');

-- _kernel_untemplate(s): s without template argument lists: each pass
-- removes the innermost `<...>` groups, ten passes cover the deepest real
-- names (FlashAttention-3 nests six).
CREATE MACRO _kernel_untemplate(s) AS
    regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
    regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(s,
    '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'),
    '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g');

-- kernel_function(kernel_name): kernel_call without template arguments:
-- what the rules about the function itself (classifier_rules.applies_to =
-- 'function') see, so a `cutlass::gemm::GemmShape` or `cute::TiledMMA`
-- argument does not make a kernel a GEMM.
CREATE MACRO kernel_function(kernel_name) AS _kernel_untemplate(kernel_call(kernel_name));

-- kernel_family(kernel_name): the family of a kernel name: the family of
-- the first rule (lowest rule_order) whose pattern matches the lower-cased
-- kernel_call of the name (kernel_function for rules that apply to the
-- function); `other` when none does. Pass coalesce(demangled, name).
-- Compiles a pattern per candidate row, so prefer Classify /
-- kernel_names.family for bulk work. (Macro arguments are substituted
-- textually: the inner aliases are spelt so no caller's column or alias
-- can be captured by them.)
CREATE MACRO kernel_family(kernel_name) AS coalesce((
    SELECT arg_min(_kf_rule.family, _kf_rule.rule_order)
    FROM (SELECT lower(kernel_call(kernel_name)) AS _kf_call) AS _kf_name,
         (SELECT _kernel_untemplate(_kf_name._kf_call) AS _kf_fn) AS _kf_fname,
         classifier_rules AS _kf_rule
    WHERE contains(CASE _kf_rule.applies_to WHEN 'function' THEN _kf_fname._kf_fn ELSE _kf_name._kf_call END, _kf_rule.keyword)
      AND regexp_matches(CASE _kf_rule.applies_to WHEN 'function' THEN _kf_fname._kf_fn ELSE _kf_name._kf_call END, _kf_rule.pattern)
), 'other');

-- kernel_rule(kernel_name): the rule_order of the rule that decides a
-- name (NULL: none, so `other`): for asking why a kernel got its family.
CREATE MACRO kernel_rule(kernel_name) AS (
    SELECT min(_kr_rule.rule_order)
    FROM (SELECT lower(kernel_call(kernel_name)) AS _kr_call) AS _kr_name,
         (SELECT _kernel_untemplate(_kr_name._kr_call) AS _kr_fn) AS _kr_fname,
         classifier_rules AS _kr_rule
    WHERE contains(CASE _kr_rule.applies_to WHEN 'function' THEN _kr_fname._kr_fn ELSE _kr_name._kr_call END, _kr_rule.keyword)
      AND regexp_matches(CASE _kr_rule.applies_to WHEN 'function' THEN _kr_fname._kr_fn ELSE _kr_name._kr_call END, _kr_rule.pattern)
);

-- family_category(fam): the category of a family (`other` for a family
-- without a category row).
CREATE MACRO family_category(fam) AS coalesce((
    SELECT _fc_row.category FROM family_categories AS _fc_row WHERE _fc_row.family = fam
), 'other');

COMMENT ON MACRO kernel_call IS 'A kernel name without its parameter list: what the classifier rules see.';
COMMENT ON MACRO kernel_function IS 'A kernel name without its parameter list and template arguments: what the rules about the function itself see.';
COMMENT ON MACRO kernel_family IS 'Classifier family of a raw kernel name (first matching rule of classifier_rules, on kernel_call or kernel_function of the name).';
COMMENT ON MACRO kernel_rule IS 'The classifier rule that matches a raw kernel name.';
COMMENT ON MACRO family_category IS 'Category (compute, communication, memory, elementwise, other) of a family.';
