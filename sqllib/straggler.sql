-- straggler: the rank that holds the others back at collectives (issue 37
-- item 5), over the ranks of one run.
--
-- A collective is one call of a communication kernel (the classifier's
-- category 'communication') on every rank taking part. Calls are matched
-- across ranks by (stage, step, kernel name, Python site) and their order
-- in the step: the n-th call of that kernel from that site in step s on
-- rank a is the same collective as the n-th on rank b. A (stage, step,
-- kernel, site) is matched only where at least two ranks have it and every
-- rank that has it made the same number of calls (otherwise the order
-- would pair calls that are not one collective); edge steps (steps.edge,
-- cut by the profiler's start and stop) are left out, as in the other step
-- figures.
--
-- A rank's arrival is the start of its collective kernel (ts_ns): a
-- collective cannot finish before its last rank arrives, so the ranks that
-- came earlier wait in it, each from its own arrival to the last arrival.
-- The last arrival's rank is the collective's straggler; several ranks at
-- the same latest instant: the lowest of them; every rank at the same
-- instant: none, and nobody waits.
--
-- Ranks are taken as one group: a run whose ranks form several process
-- groups (tensor parallel inside data parallel) matches calls of one site
-- across groups. The ranks' clocks are taken as one clock (they are on one
-- host, or synchronised), as Holistic Trace Analysis's straggler analysis
-- takes them.


-- straggler_arrivals(run): one row per rank of every matched collective of
-- one run (id or label). Columns:
--   stage, step, name_id, site_id (NULL: no site), call (1, 2, ... in the
--   step's order), ranks (ranks taking part)
--   rank, trace_id, kernel_id     this rank's collective kernel
--   arrival_ns                    its start
--   last_arrival_ns               the latest start of the collective
--   wait_ns                       last_arrival_ns - arrival_ns: this rank's
--                                 arrival relative to the last, negated
--                                 (what it waits; 0 for the last)
--   last_rank                     the collective's straggler (NULL: every
--                                 rank arrived at the same instant)
CREATE MACRO straggler_arrivals(run) AS TABLE
WITH _c AS (
    -- (rk: an unqualified `rank` would be a macro's parameter elsewhere)
    SELECT k.rank AS rk, k.stage, k.step, k.name_id, k.site_id, k.trace_id, k.kernel_id, k.ts_ns
    FROM kernels k
    JOIN kernel_names n USING (name_id)
    JOIN steps s ON s.trace_id = k.trace_id AND s.step = k.step
    WHERE k.run_id = _run_id(run) AND n.category = 'communication' AND NOT s.edge
),
_n AS (
    SELECT *,
           row_number() OVER (PARTITION BY rk, stage, step, name_id, site_id ORDER BY ts_ns, kernel_id) AS call,
           count(*) OVER (PARTITION BY rk, stage, step, name_id, site_id) AS calls
    FROM _c
),
_ok AS (
    SELECT stage, step, name_id, site_id
    FROM _n
    GROUP BY stage, step, name_id, site_id
    HAVING count(DISTINCT rk) >= 2 AND min(calls) = max(calls)
),
_m AS (
    SELECT n.*,
           count(*) OVER w AS ranks,
           max(n.ts_ns) OVER w AS last_arrival_ns,
           min(n.ts_ns) OVER w AS first_arrival_ns,
           -- the latest arrival, ties to the lowest rank
           arg_max(n.rk, (n.ts_ns, -n.rk)) OVER w AS latest_rank
    FROM _n n
    JOIN _ok o ON o.stage = n.stage AND o.step = n.step AND o.name_id = n.name_id
              AND o.site_id IS NOT DISTINCT FROM n.site_id
    WINDOW w AS (PARTITION BY n.stage, n.step, n.name_id, n.site_id, n.call)
)
SELECT stage, step, name_id, site_id, call, ranks,
       rk AS rank, trace_id, kernel_id,
       ts_ns AS arrival_ns, last_arrival_ns,
       (last_arrival_ns - ts_ns)::BIGINT AS wait_ns,
       CASE WHEN last_arrival_ns > first_arrival_ns THEN latest_rank END AS last_rank
FROM _m;

-- straggler_ranks(run): per stage and rank of one run (id or label), over
-- its matched collectives. Columns:
--   stage, rank
--   collectives      collectives the rank took part in
--   last             of them, those it arrived last at (its straggler)
--   last_pct         100 * last / collectives
--   caused_wait_ns   what the other ranks waited at the collectives it
--                    arrived last at (summed over them and the ranks)
--   wait_ns          what it waited itself for the last arrival
--   straggler        the stage's straggler: the rank that arrives last most
--                    often (ties: the larger caused wait, then the lower
--                    rank); false on every rank when no collective had a
--                    last rank
CREATE MACRO straggler_ranks(run) AS TABLE
WITH _a AS (SELECT * FROM straggler_arrivals(run)),
_caused AS (
    SELECT stage, last_rank, count(DISTINCT (step, name_id, site_id, call)) AS last, sum(wait_ns) AS caused_wait_ns
    FROM _a
    WHERE last_rank IS NOT NULL
    GROUP BY stage, last_rank
),
_r AS (
    SELECT a.stage, a.rank, count(*) AS collectives, sum(a.wait_ns)::BIGINT AS wait_ns,
           coalesce(any_value(c.last), 0)::BIGINT AS last,
           coalesce(any_value(c.caused_wait_ns), 0)::BIGINT AS caused_wait_ns
    FROM _a a
    LEFT JOIN _caused c ON c.stage = a.stage AND c.last_rank = a.rank
    GROUP BY a.stage, a.rank
)
SELECT stage, rank, collectives, last, 100.0 * last / collectives AS last_pct, caused_wait_ns, wait_ns,
       last > 0 AND row_number() OVER (PARTITION BY stage ORDER BY last DESC, caused_wait_ns DESC, rank) = 1 AS straggler
FROM _r;

-- straggler_sites(run): per stage, collective kernel and Python site of one
-- run (id or label). Columns:
--   stage, name_id, site_id
--   collectives      matched collectives (calls on every rank, one each)
--   steps            steps they were in
--   ranks            most ranks taking part in one
--   last_rank        the rank that arrived last most often (ties: the
--                    lower); NULL when none did
--   last             how often it did
--   wait_ns          what every rank waited for the last arrival, summed
--   skew_p50_ns, skew_max_ns   last arrival minus first arrival per
--                    collective: median (the lower middle of an even
--                    count) and maximum
CREATE MACRO straggler_sites(run) AS TABLE
WITH _a AS (SELECT * FROM straggler_arrivals(run)),
_coll AS (
    SELECT stage, step, name_id, site_id, call, any_value(ranks) AS ranks,
           any_value(last_rank) AS last_rank, sum(wait_ns) AS wait_ns, max(wait_ns) AS skew_ns
    FROM _a
    GROUP BY stage, step, name_id, site_id, call
),
_last AS (
    SELECT stage, name_id, site_id, last_rank, count(*) AS last
    FROM _coll
    WHERE last_rank IS NOT NULL
    GROUP BY stage, name_id, site_id, last_rank
    QUALIFY row_number() OVER (PARTITION BY stage, name_id, site_id ORDER BY count(*) DESC, last_rank) = 1
)
SELECT c.stage, c.name_id, c.site_id,
       count(*) AS collectives,
       count(DISTINCT c.step) AS steps,
       max(c.ranks) AS ranks,
       any_value(l.last_rank) AS last_rank,
       coalesce(any_value(l.last), 0)::BIGINT AS last,
       sum(c.wait_ns)::BIGINT AS wait_ns,
       quantile_disc(c.skew_ns, 0.5)::BIGINT AS skew_p50_ns,
       max(c.skew_ns)::BIGINT AS skew_max_ns
FROM _coll c
LEFT JOIN _last l ON l.stage = c.stage AND l.name_id = c.name_id AND l.site_id IS NOT DISTINCT FROM c.site_id
GROUP BY c.stage, c.name_id, c.site_id;

COMMENT ON MACRO TABLE straggler_arrivals IS 'Every rank''s arrival (start of its collective kernel) at every collective of one run (id or label), matched across ranks by stage, step, kernel, Python site and order in the step: the last arrival, this rank''s wait for it and the last rank.';
COMMENT ON MACRO TABLE straggler_ranks IS 'Per stage and rank of one run (id or label): collectives taken part in, how often the rank arrived last, what the others waited for it, what it waited; straggler marks the rank that arrives last most often.';
COMMENT ON MACRO TABLE straggler_sites IS 'Per stage, collective kernel and Python site of one run (id or label): collectives, the rank arriving last most often, the summed wait, and the median and max arrival skew.';
