-- kernel_table: triage's kernel table, every row of it.
--
-- One row per (stage, kernel short_name) of run $run: its GPU time, launch
-- count and share of the stage's summed kernel time, summed over the
-- selected rank(s), plus the kernel's spread across ranks. Rows come sorted
-- by stage (prefill, decode, mixed, unknown, others by name), GPU time
-- descending, then short name. Rows under $min_share are returned too, with
-- shown = false, so the report can say how much the filter hid.
--
-- Parameters:
--   $run        the run (for two-trace mode: the formal run; timing only)
--   $rank       one rank, NULL for every rank
--   $stage      one stage, NULL for every stage
--   $min_share  percent of the stage's summed kernel time a row needs to be
--               shown
--
-- Columns:
--   gpu_ns           sum(dur_ns) over the selected ranks
--   launches         count of GPU events
--   avg_ns           gpu_ns / launches
--   stage_kernel_ns  sum(dur_ns) of every GPU event of the stage (same ranks):
--                    the denominator of share_pct
--   share_pct        100 * gpu_ns / stage_kernel_ns (0 when that is 0)
--   family/category  those of the raw name with the most GPU time among the
--                    raw names sharing the short name, ties by the raw name
--                    (not name_id, which follows the order names were first
--                    ingested; the rule overlap_by_kernel.sql uses, so both
--                    tables agree)
--   rank_min_ns, rank_median_ns, rank_max_ns
--                    the kernel's GPU time per rank, over every selected rank
--                    that has GPU events in the stage (a rank where the kernel
--                    never ran counts 0: that is the straggler signal);
--                    median of an even count is the mean of the middle two
--   ranks            how many ranks that is
--   stage_hidden_rows, stage_hidden_ns
--                    how many rows of the stage $min_share hides, and their
--                    summed gpu_ns (the same on every row of a stage)
WITH per_rank_name AS (
    -- aggregate the big table first, join names on the small result
    SELECT stage, rank, name_id, sum(dur_ns) AS ns, count(*) AS launches
    FROM kernels
    WHERE run_id = $run
      AND ($rank IS NULL OR rank = $rank)
      AND ($stage IS NULL OR stage = $stage)
    GROUP BY stage, rank, name_id
),
named AS (
    SELECT p.stage, p.rank, p.name_id, p.ns, p.launches, n.name, n.short_name, n.family, n.category
    FROM per_rank_name p
    JOIN kernel_names n USING (name_id)
),
per_name_id AS (
    -- each raw name's time and launches in its stage, over the ranks
    SELECT stage, short_name, name_id, any_value(name) AS name, any_value(family) AS family,
           any_value(category) AS category, sum(ns) AS ns, sum(launches) AS launches
    FROM named
    GROUP BY stage, short_name, name_id
),
totals AS (
    -- each short name's time and launches, and its labels, in one grouping
    -- of its raw names (the ranks' sums summed otherwise: the same sums)
    SELECT stage, short_name,
           first(family ORDER BY ns DESC, name) AS family,
           first(category ORDER BY ns DESC, name) AS category,
           sum(ns)::BIGINT AS gpu_ns, sum(launches)::BIGINT AS launches
    FROM per_name_id
    GROUP BY stage, short_name
),
per_rank AS (
    SELECT stage, short_name, rank, sum(ns) AS ns, sum(launches) AS launches
    FROM named
    GROUP BY stage, short_name, rank
),
stage_ranks AS (
    SELECT DISTINCT stage, rank FROM per_rank
),
spread AS (
    -- (one rank selected, a kernel's spread is its own GPU time: the final
    -- select says so without joining this, which $rank given prunes, 1.3
    -- ms of a demo trace's 5.4)
    SELECT k.stage, k.short_name,
           min(coalesce(p.ns, 0))::BIGINT AS rank_min_ns,
           quantile_cont(coalesce(p.ns, 0), 0.5)::DOUBLE AS rank_median_ns,
           max(coalesce(p.ns, 0))::BIGINT AS rank_max_ns,
           count(*) AS ranks
    FROM (SELECT DISTINCT stage, short_name FROM per_rank) k
    JOIN stage_ranks r USING (stage)
    LEFT JOIN per_rank p
           ON p.stage = k.stage AND p.short_name = k.short_name AND p.rank = r.rank
    GROUP BY k.stage, k.short_name
),
stage_totals AS (
    SELECT stage, sum(gpu_ns)::BIGINT AS stage_kernel_ns
    FROM totals
    GROUP BY stage
),
shares AS (
    SELECT t.stage, t.short_name, t.family, t.category, t.gpu_ns, t.launches, s.stage_kernel_ns,
           CASE WHEN s.stage_kernel_ns > 0
                THEN t.gpu_ns::DOUBLE * 100 / s.stage_kernel_ns::DOUBLE
                ELSE 0 END AS share_pct
    FROM totals t
    JOIN stage_totals s USING (stage)
)
SELECT s.stage, s.short_name,
       coalesce(s.family, 'unclassified') AS family,
       coalesce(s.category, 'unclassified') AS category,
       s.gpu_ns, s.launches,
       s.gpu_ns::DOUBLE / s.launches AS avg_ns,
       s.stage_kernel_ns, s.share_pct,
       s.share_pct >= $min_share AS shown,
       CASE WHEN $rank IS NULL THEN p.rank_min_ns ELSE s.gpu_ns END AS rank_min_ns,
       CASE WHEN $rank IS NULL THEN p.rank_median_ns ELSE s.gpu_ns::DOUBLE END AS rank_median_ns,
       CASE WHEN $rank IS NULL THEN p.rank_max_ns ELSE s.gpu_ns END AS rank_max_ns,
       CASE WHEN $rank IS NULL THEN p.ranks ELSE 1 END AS ranks,
       count(*) FILTER (WHERE s.share_pct < $min_share) OVER (PARTITION BY s.stage) AS stage_hidden_rows,
       coalesce(sum(s.gpu_ns) FILTER (WHERE s.share_pct < $min_share) OVER (PARTITION BY s.stage), 0)::BIGINT
           AS stage_hidden_ns
FROM shares s
LEFT JOIN spread p ON $rank IS NULL AND p.stage = s.stage AND p.short_name = s.short_name
ORDER BY CASE s.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         s.stage, s.gpu_ns DESC, s.short_name
