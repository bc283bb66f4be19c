-- 0014_fingerprint_names: _overlap_fingerprint folded every kernel's
-- (name, category) pair into one bit_xor, so the pairs of a name used by
-- an even number of the run's kernels cancelled out: changing such a
-- name's category left the fingerprint, and so every saved copy built on
-- it (per-kernel overlap, device busy rows, steps, fuse-pattern and
-- overlap-table rows), marked current. The pairs' hashes are now summed
-- as HUGEINT, which cannot wrap: a change moves the sum by the kernels'
-- count times the difference of two hashes, never by zero unless they
-- collide. (bit_xor(DISTINCT ...) would do as well at the price of a hash
-- table per fingerprint; the two measured the same on a small run.)
--
-- A copy saved under the old fingerprint cannot be told apart from one
-- that went stale unnoticed, so every copy's record is forgotten: reports
-- compute live until the next `ingest`, `triage PATH` or `capture`
-- finishes the run again (the *_pending queries find runs without a
-- record). The saved rows stay until that save replaces them.
--
-- (Rewritten once after landing, when every macro and view moved into the
-- SQL library, sqllib/: the new _overlap_fingerprint is in
-- sqllib/overlap.sql. A warehouse never runs an applied migration again,
-- and schema.Open creates the library in every warehouse.)

DELETE FROM kernel_overlap_runs;
DELETE FROM step_store_runs;
DELETE FROM fusion_store_runs;
DELETE FROM overlap_row_runs;
