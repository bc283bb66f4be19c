-- 0018_classify_call: the classifier reads a kernel's own name, not its
-- parameter list (issue 34 item 0).
--
-- Rules matched anywhere in the whole signature, so a parameter type could
-- decide a family: FBGEMM's `split_embedding_codegen_forward_*_kernel<...>(
-- ..., fbgemm_gpu::FixedDivisor, ...)` kernels were `gemm` by the `gemm`
-- inside `fbgemm_gpu`. Now every rule sees the name without its parameter
-- list (kernel_call), and rules about the function itself (applies_to =
-- 'function') see it without template arguments too (kernel_function): a
-- `cutlass::gemm::GemmShape` or `cute::TiledMMA` argument does not make a
-- kernel a GEMM. The `gemm` rule also leaves `fbgemm` alone (FBGEMM's GPU
-- kernels are embedding and sparse ops; its GEMMs are CUTLASS or Triton
-- kernels, which other rules match). Ends with the reclassification of
-- every stored name, as 0002 does, so `reclassify` is not needed after an
-- upgrade.

-- The name without its final balanced parenthesised group (the parameter
-- list) and the blanks before it. The group may nest six deep (function
-- pointer and lambda types); a deeper one is left whole. A name that does
-- not end in `)` is returned as it is.
CREATE MACRO kernel_call(kernel_name) AS regexp_replace(kernel_name,
    ' *\((?:[^()]|\((?:[^()]|\((?:[^()]|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))*\))*\))*\)$', '');

-- kernel_call without template argument lists: each pass removes the
-- innermost `<...>` groups, ten passes cover the deepest real names
-- (FlashAttention-3 nests six).
CREATE MACRO _kernel_untemplate(s) AS
    regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
    regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(s,
    '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'),
    '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g');

CREATE MACRO kernel_function(kernel_name) AS _kernel_untemplate(kernel_call(kernel_name));

-- What each rule is matched against: 'call' (kernel_call: the name with
-- its template arguments) or 'function' (kernel_function).
ALTER TABLE classifier_rules ADD COLUMN applies_to VARCHAR DEFAULT 'call';

UPDATE classifier_rules SET applies_to = 'function', pattern = '(?:^|[^b]|[^f]b)gemm(?:[^a]|$)',
    note = 'any *gemm* in the function''s name; not gemma (the model: gemma_fused_add_rmsnorm, GemmaRMSNorm are norm), not fbgemm (FBGEMM''s embedding kernels), not a cutlass::gemm template argument'
WHERE rule_order = 601;
UPDATE classifier_rules SET applies_to = 'function',
    note = 'MMA, HMMA, IMMA, WMMA, XMMA, WGMMA, BMMA in the function''s name; not gemma, comma, dilemma, collectivemma, nor a TiledMMA template argument'
WHERE rule_order = 613;

INSERT INTO classifier_rules VALUES
    (1414, 'elementwise', 'split_embedding', 'split_embedding', 'void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 4l, 4l, false>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>, fbgemm_gpu::FixedDivisor, long)', 'FBGEMM table-batched embedding lookups (DLRM): gathers, not GEMMs', 'call');

-- The family of a kernel name: the first rule (lowest rule_order) whose
-- pattern matches the lower-cased kernel_call (or kernel_function) of the
-- name; `other` when none does. Pass coalesce(demangled, name).
CREATE OR REPLACE MACRO kernel_family(kernel_name) AS coalesce((
    SELECT arg_min(_kf_rule.family, _kf_rule.rule_order)
    FROM (SELECT lower(kernel_call(kernel_name)) AS _kf_call) AS _kf_name,
         (SELECT _kernel_untemplate(_kf_name._kf_call) AS _kf_fn) AS _kf_fname,
         classifier_rules AS _kf_rule
    WHERE contains(CASE _kf_rule.applies_to WHEN 'function' THEN _kf_fname._kf_fn ELSE _kf_name._kf_call END, _kf_rule.keyword)
      AND regexp_matches(CASE _kf_rule.applies_to WHEN 'function' THEN _kf_fname._kf_fn ELSE _kf_name._kf_call END, _kf_rule.pattern)
), 'other');

CREATE OR REPLACE MACRO kernel_rule(kernel_name) AS (
    SELECT min(_kr_rule.rule_order)
    FROM (SELECT lower(kernel_call(kernel_name)) AS _kr_call) AS _kr_name,
         (SELECT _kernel_untemplate(_kr_name._kr_call) AS _kr_fn) AS _kr_fname,
         classifier_rules AS _kr_rule
    WHERE contains(CASE _kr_rule.applies_to WHEN 'function' THEN _kr_fname._kr_fn ELSE _kr_name._kr_call END, _kr_rule.keyword)
      AND regexp_matches(CASE _kr_rule.applies_to WHEN 'function' THEN _kr_fname._kr_fn ELSE _kr_name._kr_call END, _kr_rule.pattern)
);

INSERT INTO classifier_versions VALUES
    (2, '0018_classify_call', 'rules see the name without its parameter list (and, for gemm and mma, without template arguments); fbgemm is not gemm; FBGEMM embedding kernels are elementwise');

COMMENT ON MACRO kernel_call IS 'A kernel name without its parameter list: what the classifier rules see.';
COMMENT ON MACRO kernel_function IS 'A kernel name without its parameter list and template arguments: what the rules about the function itself see.';
COMMENT ON MACRO kernel_family IS 'Classifier family of a raw kernel name (first matching rule of classifier_rules, on kernel_call or kernel_function of the name).';
COMMENT ON MACRO kernel_rule IS 'The classifier rule that matches a raw kernel name.';
COMMENT ON COLUMN classifier_rules.applies_to IS 'call: the rule sees kernel_call(name); function: kernel_function(name), without template arguments.';

UPDATE kernel_names AS k
SET family = c.family, category = family_category(c.family)
FROM (
    SELECT name_id, kernel_family(coalesce(demangled, name)) AS family
    FROM kernel_names
) AS c
WHERE k.name_id = c.name_id
  AND (k.family IS DISTINCT FROM c.family OR k.category IS DISTINCT FROM family_category(c.family));
