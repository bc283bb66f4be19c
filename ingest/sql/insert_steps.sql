-- insert_steps: finds the step windows of trace $trace and stores them in
-- `steps` (migrations/0008_steps.sql says what a step is), numbered from 1
-- in start order; a trace without step evidence gets one step 0 (source
-- 'window') covering all of it. Evidence, strongest first, of which only
-- the strongest present is used: SGLang step[...] annotations, vLLM
-- execute_..._context_..._generation_... annotations, ProfilerStep#N, the
-- repeating gpu_user_annotation covering the most time; or, when $steps_by
-- is set, the kernel it names (a step ends where each of its launches ends,
-- so the first step starts with the trace's first GPU event and events
-- after the last launch form a last, partial step).
--
-- A GPU annotation window belongs to the step of the latest CPU annotation
-- of the same name that starts at or before it (Kineto mirrors each
-- user_annotation that launched GPU work as a gpu_user_annotation); a GPU
-- window without one is a step of its own. Steps are edge steps when the
-- trace has more than four and they are the first or the last.
--
-- Runs inside the trace's transaction, after times are absolute.
-- Parameters: $trace; $steps_by (RE2 pattern matched against kernel short
-- names, NULL = use annotations).
INSERT INTO steps
WITH _a AS (
    SELECT name, cat, ts_ns, ts_ns + dur_ns AS end_ns, stage,
           row_number() OVER (ORDER BY ts_ns, name, cat, dur_ns) AS aid,
           CASE WHEN starts_with(name, 'step[') THEN 1
                WHEN regexp_matches(name, '^execute_\d+_context_\d+\(\d+\)_generation_\d+\(\d+\)') THEN 2
                WHEN regexp_matches(name, '^ProfilerStep#\d+$') THEN 3
           END AS kind
    FROM annotations
    WHERE trace_id = $trace AND $steps_by IS NULL
),
_repeat AS (
    SELECT name
    FROM _a
    WHERE kind IS NULL AND cat = 'gpu_user_annotation'
    GROUP BY name
    HAVING count(*) >= 2
    ORDER BY sum(end_ns - ts_ns) DESC, name
    LIMIT 1
),
_chosen AS (
    SELECT *
    FROM (SELECT *, coalesce(kind, 4) AS k
          FROM _a
          WHERE kind IS NOT NULL
             OR (cat = 'gpu_user_annotation' AND name IN (SELECT name FROM _repeat)))
    QUALIFY k = min(k) OVER ()
),
_cpu AS (
    SELECT * FROM _chosen WHERE cat <> 'gpu_user_annotation'
),
_gpu AS (
    SELECT g.name, g.k, g.stage, g.ts_ns, g.end_ns, c.aid AS cpu_aid
    FROM (SELECT * FROM _chosen WHERE cat = 'gpu_user_annotation') g
    LEFT JOIN _cpu c ON c.name = g.name AND c.ts_ns <= g.ts_ns
    QUALIFY row_number() OVER (PARTITION BY g.aid ORDER BY c.ts_ns DESC NULLS LAST, c.aid DESC) = 1
),
_annotated AS (
    SELECT c.name, c.k, c.stage, c.ts_ns AS cpu_ts, c.end_ns AS cpu_end,
           min(g.ts_ns) AS gpu_ts, max(g.end_ns) AS gpu_end
    FROM _cpu c
    LEFT JOIN _gpu g ON g.cpu_aid = c.aid
    GROUP BY c.aid, c.name, c.k, c.stage, c.ts_ns, c.end_ns
    UNION ALL
    SELECT name, k, stage, NULL, NULL, ts_ns, end_ns
    FROM _gpu
    WHERE cpu_aid IS NULL
),
_marks AS (
    SELECT k.ts_ns + k.dur_ns AS end_ns
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    WHERE k.trace_id = $trace AND $steps_by IS NOT NULL
      AND regexp_matches(n.short_name, $steps_by)
),
_bounds AS (
    SELECT min(ts_ns) AS first_ns, max(ts_ns + dur_ns) AS last_ns
    FROM kernels
    WHERE trace_id = $trace AND $steps_by IS NOT NULL
),
_marked AS (
    SELECT $steps_by AS name, 5 AS k, NULL AS stage, NULL::BIGINT AS cpu_ts, NULL::BIGINT AS cpu_end,
           coalesce(lag(m.end_ns) OVER (ORDER BY m.end_ns), b.first_ns) AS gpu_ts, m.end_ns AS gpu_end
    FROM _marks m, _bounds b
    UNION ALL
    SELECT $steps_by, 5, NULL, NULL, NULL, max(m.end_ns), any_value(b.last_ns) + 1
    FROM _marks m, _bounds b
    HAVING max(m.end_ns) < any_value(b.last_ns)
),
_all AS (
    SELECT * FROM _annotated
    UNION ALL
    SELECT * FROM _marked
),
_numbered AS (
    SELECT *,
           row_number() OVER (ORDER BY coalesce(cpu_ts, gpu_ts), gpu_ts, name) AS step,
           count(*) OVER () AS steps,
           regexp_extract(name, '^execute_\d+_context_(\d+)\((\d+)\)_generation_(\d+)\((\d+)\)',
                          ['c', 'ct', 'g', 'gt']) AS v
    FROM _all
)
SELECT $trace, step,
       CASE k WHEN 1 THEN 'step_annotation' WHEN 2 THEN 'vllm_execute' WHEN 3 THEN 'profiler_step'
              WHEN 4 THEN 'gpu_annotation' ELSE 'kernel' END,
       name, stage,
       CASE k WHEN 1 THEN TRY_CAST(regexp_extract(name, '\bbs=(\d+)', 1) AS INTEGER)
              WHEN 2 THEN TRY_CAST(v.c AS INTEGER) + TRY_CAST(v.g AS INTEGER) END,
       CASE k WHEN 1 THEN TRY_CAST(regexp_extract(name, '\b(?:toks|tokens|tok)=(\d+)', 1) AS INTEGER)
              WHEN 2 THEN TRY_CAST(v.ct AS INTEGER) + TRY_CAST(v.gt AS INTEGER) END,
       cpu_ts, cpu_end, gpu_ts, gpu_end,
       steps > 4 AND (step = 1 OR step = steps)
FROM _numbered
UNION ALL
SELECT $trace, 0, 'window', '', NULL, NULL, NULL, NULL, NULL, NULL, NULL, false
WHERE NOT EXISTS (SELECT 1 FROM _all)
