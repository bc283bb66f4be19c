-- insert_trace: the row describing one ingested trace file.
INSERT INTO traces (
    trace_id, run_id, path, content_hash, bytes, json_bytes, compressed,
    rank, tp_rank, dp_rank, pp_rank, ep_rank, rank_assumed,
    stage, stage_source, role, role_source, merged,
    framework, framework_evidence, device_name, device_properties, distributed_info,
    schema_version, trace_name, base_time_ns, start_ns, end_ns,
    events, kernel_events, memcpy_events, memset_events, launch_events, graph_launches,
    cpu_op_events, py_frame_events, annotation_events, flow_events, counter_events,
    instant_events, metadata_events, other_events, warnings, warning_notes,
    ingested_at, ingest_ms)
VALUES (
    $trace_id, $run_id, $path, $content_hash, $bytes, $json_bytes, $compressed,
    $rank, $tp_rank, $dp_rank, $pp_rank, $ep_rank, $rank_assumed,
    $stage, $stage_source, $role, $role_source, $merged,
    $framework, $framework_evidence, $device_name, $device_properties::JSON, $distributed_info::JSON,
    $schema_version, $trace_name, $base_time_ns, $start_ns, $end_ns,
    $events, $kernel_events, $memcpy_events, $memset_events, $launch_events, $graph_launches,
    $cpu_op_events, $py_frame_events, $annotation_events, $flow_events, $counter_events,
    $instant_events, $metadata_events, $other_events, $warnings, string_split(nullif($warning_notes, ''), chr(10)),
    now()::TIMESTAMP, $ingest_ms)
