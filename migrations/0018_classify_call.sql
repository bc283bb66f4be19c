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
--
-- (Rewritten once after landing, when every macro and view moved into the
-- SQL library, sqllib/: kernel_call, kernel_function and the new
-- kernel_family and kernel_rule are in sqllib/classify.sql. A warehouse
-- never runs an applied migration again, and schema.Open creates the
-- library in every warehouse.)

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

INSERT INTO classifier_versions VALUES
    (2, '0018_classify_call', 'rules see the name without its parameter list (and, for gemm and mma, without template arguments); fbgemm is not gemm; FBGEMM embedding kernels are elementwise');
COMMENT ON COLUMN classifier_rules.applies_to IS 'call: the rule sees kernel_call(name); function: kernel_function(name), without template arguments.';

-- Reclassify every stored name with the rules above (the classifier
-- macros of sqllib/classify.sql as this migration defined them, written
-- out: migrations do not call the library).
UPDATE kernel_names AS k
SET family = c.family, category = c.category
FROM (
    SELECT f.name_id, f.family,
           coalesce((SELECT fc.category FROM family_categories fc WHERE fc.family = f.family), 'other') AS category
    FROM (
        SELECT n.name_id,
               coalesce((SELECT arg_min(r.family, r.rule_order)
                         FROM classifier_rules r
                         WHERE contains(CASE r.applies_to WHEN 'function' THEN n.fn ELSE n.call END, r.keyword)
                           AND regexp_matches(CASE r.applies_to WHEN 'function' THEN n.fn ELSE n.call END, r.pattern)), 'other') AS family
        FROM (
            SELECT name_id, call,
                   regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
                   regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(call,
                   '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'),
                   '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g'), '<[^<>]*>', '', 'g') AS fn
            FROM (
                SELECT name_id,
                       lower(regexp_replace(coalesce(demangled, name),
                           ' *\((?:[^()]|\((?:[^()]|\((?:[^()]|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))*\))*\))*\)$', '')) AS call
                FROM kernel_names
            )
        ) n
    ) f
) AS c
WHERE k.name_id = c.name_id
  AND (k.family IS DISTINCT FROM c.family OR k.category IS DISTINCT FROM c.category);
