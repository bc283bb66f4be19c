-- 0019_display_name: the name a person reads for each kernel (issue 34
-- item 1), stored beside the forms ingest already keeps so that `sql` and
-- a lake show it: no return type, no parameter list, no namespaces,
-- template arguments folded to `<…>` (`sm100_fp8_gemm_1d1d_impl<…>`,
-- `FlashAttnFwdSm90<…>`), plain identifiers and text unchanged (nvjet,
-- NCCL, Triton names, `Memcpy HtoD (Pageable -> Device)`). Go computes it
-- (package kernelname, from short_name) when a name is stored; rows of a
-- warehouse made before this migration get theirs at the next ingest or
-- `reclassify`, and stay NULL until then.
--
-- Reports label a kernel by this name, and where two kernels of one
-- table would read the same, by the shortest part of their names that
-- tells them apart (kernelname.Labels): that choice depends on the table,
-- so it is not stored.

ALTER TABLE kernel_names ADD COLUMN display_name VARCHAR;

COMMENT ON COLUMN kernel_names.display_name IS 'The name reports show: short_name without return type, namespaces and parameters, template arguments folded to <…>; NULL until the next ingest or reclassify on a warehouse older than it.';
