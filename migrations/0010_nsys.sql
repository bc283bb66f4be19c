-- 0010_nsys: traces from Nsight Systems beside torch.profiler (Kineto) traces.
--
-- Ingest reads Nsight Systems SQLite exports (`nsys export --type sqlite`,
-- and `.nsys-rep` reports through the nsys binary) into the same tables as
-- Kineto traces. A run can then hold either kind, and reports need to say
-- which: traces.source_format records it per file. Rows written before this
-- migration are Kineto traces.
--
-- nsys records no Python stacks. A kernel's location (kernels.site_id) in an
-- nsys trace is the innermost NVTX range open on the launching thread at
-- its runtime call, stored in `sites` with framework 'nvtx' and a display
-- starting `nvtx: `; a kernel no range encloses stays unresolved.

-- traces.source_format: what the file was.
ALTER TABLE traces ADD COLUMN source_format VARCHAR DEFAULT 'kineto';

COMMENT ON COLUMN traces.source_format IS 'kineto (torch.profiler Chrome trace JSON) | nsys (Nsight Systems SQLite export, or .nsys-rep exported through nsys).';
COMMENT ON COLUMN sites.framework IS 'Whose code: sglang | vllm | trtllm | tokenspeed | torch | python | other; nvtx for an NVTX range (nsys traces), whose display is `nvtx: <range>`.';
COMMENT ON COLUMN kernels.site_id IS 'Innermost serving-framework Python frame around the launch (sites); for nsys traces the innermost NVTX range around the launch (sites.framework = nvtx).';
COMMENT ON COLUMN traces.json_bytes IS 'Size of the JSON after decompression; for nsys traces, of the SQLite export read.';
COMMENT ON COLUMN traces.merged IS 'A merged-* file holding several ranks, or an nsys export with several GPUs and no rank in its name (kernels.rank then follows the pid, or the device).';
COMMENT ON COLUMN traces.rank_assumed IS 'True when no file-name token, distributedInfo or (nsys) single GPU gave the rank (rank is then 0).';
