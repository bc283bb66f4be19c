-- idle_worst_gaps: the longest device gaps of each stage (sqllib/idle.sql),
-- edge steps left out, over the selected rank(s): what the GPU waited for
-- longest, between which two events, and where the launch that ended the
-- wait came from.
--
-- Columns:
--   stage, rank, step
--   gap_ns         the gap; gap_start_ns: when it began
--   cause          graph_internal | sync | host_bound | launch_latency | other
--   before, after  short names of the events before and after it
--   site           the Python site of the event after it (its own, else its
--                  launch's; NULL when none): for a host-bound gap, where
--                  the late launch came from
--   kernel_id      the event after the gap
-- At most $n rows per stage, longest first (ties by rank, then start, then
-- the trace's path and content hash, then the event's place in its trace:
-- not by kernel_id alone, whose high half, the trace id, follows the order
-- files were ingested in). Sorted by stage (prefill, decode, mixed,
-- unknown, others by name), then gap.
--
-- Parameters: $run; $rank (NULL = every rank); $stage (NULL = every
-- stage); $n; $launch_gap_ns (NULL = the saved rows' 30 us); $fresh (as
-- idle_by_stage.sql).
SELECT g.stage, g.rank, g.step, g.gap_ns, g.gap_start_ns, g.cause,
       pn.short_name AS before, nn.short_name AS after, s.display AS site, g.kernel_id
FROM _idle_worst_gaps_cached($run, launch_gap_ns := coalesce($launch_gap_ns, _idle_default_gap()), fresh := $fresh) g
JOIN kernel_names pn ON pn.name_id = g.prev_name_id
JOIN kernel_names nn ON nn.name_id = g.next_name_id
LEFT JOIN sites s ON s.site_id = g.site_id
JOIN traces t ON t.trace_id = g.trace_id
WHERE ($rank IS NULL OR g.rank = $rank) AND ($stage IS NULL OR g.stage = $stage)
QUALIFY row_number() OVER (PARTITION BY g.stage ORDER BY g.gap_ns DESC, g.rank, g.gap_start_ns,
                                                         t.path, t.content_hash, g.kernel_id) <= $n
ORDER BY CASE g.stage WHEN 'prefill' THEN 0 WHEN 'decode' THEN 1 WHEN 'mixed' THEN 2
                      WHEN 'unknown' THEN 3 ELSE 4 END,
         g.stage, g.gap_ns DESC, g.rank, g.gap_start_ns, t.path, t.content_hash, g.kernel_id
