/// `/metrics`: a ``StatusReport`` in the Prometheus text format 0.0.4.
///
/// Families (all with `# HELP` and `# TYPE`; counters end in `_total`):
/// - bus: `herald_events_published_total{topic}`, and per subscription
///   (`{subscription, id}`: names may repeat, ids do not) `herald_subscription_delivered_total`,
///   `…_dropped_total`, `…_failed_total`, `…_discarded_total`, `herald_subscription_queue_depth`,
///   `herald_subscription_queue_high_water_mark`;
/// - loaders (`{loader}`): `herald_loader_pulls_total`, `herald_loader_failures_total{loader, kind}`,
///   `herald_loader_new_items_total`, `herald_loader_last_success_timestamp_seconds` (0 before
///   the first success), `herald_loader_next_run_timestamp_seconds` (0 while loading or stopped),
///   `herald_loader_consecutive_failures`;
/// - posts (`{scheduler}`, `{scheduler, rule}`): `herald_post_intents_pending`,
///   `herald_post_intents_held`, `herald_posts_sent_total`, `herald_posts_failed_total`;
/// - archives (`{sink}`): `herald_archive_written_bytes_total`, `herald_archive_lines_total`,
///   `herald_archive_rotations_total`, `herald_archive_failures_total`;
/// - the endpoint: `herald_status_stream_clients`, `herald_status_stream_dropped_clients_total`,
///   `herald_status_stream_buffered_bytes`, `herald_status_stream_client_bytes_max`,
///   `herald_status_stream_client_bytes_peak`, `herald_status_stream_client_bytes_limit`,
///   `herald_ready`;
/// - the configuration: `herald_config_last_reload_successful`,
///   `herald_config_last_reload_success_timestamp_seconds`, `herald_config_reloads_total`,
///   `herald_config_info{sha1}`;
/// - the process: `process_resident_memory_bytes`, `process_cpu_seconds_total`,
///   `process_open_fds`, `process_max_fds`, `process_start_time_seconds`.
enum StatusMetrics {
    static func render(_ report: StatusReport) -> String {
        var out = PrometheusText()
        bus(report.bus, &out)
        loaders(report.loaders, &out)
        posts(report.posts, &out)
        archives(report.archives, &out)
        out.family("herald_status_stream_clients", .gauge, "Clients connected to /events.")
        out.sample("herald_status_stream_clients", [:], Double(report.streams.clients))
        out.family("herald_status_stream_dropped_clients_total", .counter, "Clients of /events dropped for not reading fast enough.")
        out.sample("herald_status_stream_dropped_clients_total", [:], Double(report.streams.dropped))
        out.family("herald_status_stream_buffered_bytes", .gauge, "Bytes of events held for /events clients (being written and waiting), all together.")
        out.sample("herald_status_stream_buffered_bytes", [:], Double(report.streams.bufferedBytes))
        out.family("herald_status_stream_client_bytes_max", .gauge, "The most bytes of events one /events client holds now.")
        out.sample("herald_status_stream_client_bytes_max", [:], Double(report.streams.largestClientBytes))
        out.family("herald_status_stream_client_bytes_peak", .gauge, "The most bytes of events one /events client held at once since start.")
        out.sample("herald_status_stream_client_bytes_peak", [:], Double(report.streams.peakClientBytes))
        out.family("herald_status_stream_client_bytes_limit", .gauge, "The bound of bytes of events held for one /events client.")
        out.sample("herald_status_stream_client_bytes_limit", [:], Double(report.streams.clientBufferLimit))
        out.family("herald_ready", .gauge, "1 once every service of the daemon has started, else 0.")
        out.sample("herald_ready", [:], report.ready ? 1 : 0)
        if let config = report.config { self.config(config, &out) }
        if let process = report.process { self.process(process, &out) }
        return out.text
    }

    private static func bus(_ bus: StatusReport.Bus, _ out: inout PrometheusText) {
        out.family("herald_events_published_total", .counter, "Events published on the bus, by topic.", bus.topics) {
            (["topic": $0.topic], Double($0.published))
        }
        let subscriptions = bus.subscriptions
        func perSubscription(_ name: String, _ kind: PrometheusText.Kind, _ help: String,
                             _ value: (StatusReport.Subscription) -> Int) {
            out.family(name, kind, help, subscriptions) { (["subscription": $0.name, "id": String($0.id)], Double(value($0))) }
        }
        perSubscription("herald_subscription_delivered_total", .counter, "Events a subscription's handler or stream received.", \.delivered)
        perSubscription("herald_subscription_dropped_total", .counter, "Events a subscription's mailbox dropped under its overflow policy.", \.dropped)
        perSubscription("herald_subscription_failed_total", .counter, "Handler calls of a subscription that threw.", \.failed)
        perSubscription("herald_subscription_discarded_total", .counter, "Events a subscription discarded undelivered at its end or the bus's shutdown.", \.discarded)
        perSubscription("herald_subscription_queue_depth", .gauge, "Events waiting in a subscription's mailbox.", \.queueDepth)
        perSubscription("herald_subscription_queue_high_water_mark", .gauge, "The most events that ever waited in a subscription's mailbox.", \.highWaterMark)
    }

    private static func loaders(_ loaders: [StatusReport.Loader], _ out: inout PrometheusText) {
        out.family("herald_loader_pulls_total", .counter, "Loads finished, successful or not.", loaders) {
            (["loader": $0.id], Double($0.pulls))
        }
        out.family("herald_loader_failures_total", .counter, "Failed loads by kind of failure.")
        for loader in loaders {
            for (kind, count) in loader.failures.sorted(by: { $0.key < $1.key }) {
                out.sample("herald_loader_failures_total", ["loader": loader.id, "kind": kind], Double(count))
            }
        }
        out.family("herald_loader_new_items_total", .counter, "Items loads announced as new.", loaders) {
            (["loader": $0.id], Double($0.newItems))
        }
        out.family("herald_loader_last_success_timestamp_seconds", .gauge, "When the last successful load ended, as a Unix time (0: none yet).", loaders) {
            (["loader": $0.id], $0.lastSuccess?.timeIntervalSince1970 ?? 0)
        }
        out.family("herald_loader_next_run_timestamp_seconds", .gauge, "When the next load is due, as a Unix time (0: loading, starting or stopped).", loaders) {
            (["loader": $0.id], $0.nextRun?.timeIntervalSince1970 ?? 0)
        }
        out.family("herald_loader_consecutive_failures", .gauge, "Failed loads in a row (rate limits excluded).", loaders) {
            (["loader": $0.id], Double($0.consecutiveFailures))
        }
    }

    private static func posts(_ posters: [StatusReport.Poster], _ out: inout PrometheusText) {
        out.family("herald_post_intents_pending", .gauge, "Post intents in the outbox waiting to be sent or being sent.", posters) {
            (["scheduler": $0.name], Double($0.pending.count))
        }
        out.family("herald_post_intents_held", .gauge, "Post intents held in memory because the outbox refused them.", posters) {
            (["scheduler": $0.name], Double($0.held))
        }
        let rules = posters.flatMap { poster in poster.rules.sorted().map { (poster, $0) } }
        out.family("herald_posts_sent_total", .counter, "Posts sent (a duplicate that counts as sent included), by rule.", rules) {
            (["scheduler": $0.0.name, "rule": $0.1], Double($0.0.sent[$0.1] ?? 0))
        }
        out.family("herald_posts_failed_total", .counter, "Posts given up, by rule.", rules) {
            (["scheduler": $0.0.name, "rule": $0.1], Double($0.0.failed[$0.1] ?? 0))
        }
    }

    private static func archives(_ archives: [StatusReport.Archive], _ out: inout PrometheusText) {
        out.family("herald_archive_written_bytes_total", .counter, "Bytes an archive (file subscriber) wrote, newlines included.", archives) {
            (["sink": $0.name], Double($0.bytes))
        }
        out.family("herald_archive_lines_total", .counter, "Lines (events) an archive wrote.", archives) {
            (["sink": $0.name], Double($0.lines))
        }
        out.family("herald_archive_rotations_total", .counter, "Size rotations of an archive.", archives) {
            (["sink": $0.name], Double($0.rotations))
        }
        out.family("herald_archive_failures_total", .counter, "Failed opens, writes, rotations and syncs of an archive.", archives) {
            (["sink": $0.name], Double($0.failures))
        }
    }

    private static func config(_ config: StatusConfig, _ out: inout PrometheusText) {
        out.family("herald_config_last_reload_successful", .gauge, "Whether the last configuration reload applied (1 before any reload).")
        out.sample("herald_config_last_reload_successful", [:], config.lastReloadSuccessful ? 1 : 0)
        out.family("herald_config_last_reload_success_timestamp_seconds", .gauge, "When the configuration was last loaded successfully, as a Unix time.")
        out.sample("herald_config_last_reload_success_timestamp_seconds", [:], config.lastSuccess?.timeIntervalSince1970 ?? 0)
        out.family("herald_config_reloads_total", .counter, "Configuration reloads run (SIGHUP and POST /-/reload; coalesced requests count once).")
        out.sample("herald_config_reloads_total", [:], Double(config.reloads))
        if let sha1 = config.sha1 {
            out.family("herald_config_info", .gauge, "The running configuration's file hash (always 1).")
            out.sample("herald_config_info", ["sha1": sha1], 1)
        }
    }

    private static func process(_ process: ProcessStatistics, _ out: inout PrometheusText) {
        out.family("process_resident_memory_bytes", .gauge, "Resident memory size in bytes.")
        out.sample("process_resident_memory_bytes", [:], Double(process.residentMemoryBytes))
        out.family("process_cpu_seconds_total", .counter, "Total user and system CPU time spent in seconds.")
        out.sample("process_cpu_seconds_total", [:], process.cpuSeconds)
        out.family("process_open_fds", .gauge, "Number of open file descriptors.")
        out.sample("process_open_fds", [:], Double(process.openFileDescriptors))
        if let max = process.maxFileDescriptors {
            out.family("process_max_fds", .gauge, "Maximum number of open file descriptors.")
            out.sample("process_max_fds", [:], Double(max))
        }
        if let start = process.startTimeSeconds {
            out.family("process_start_time_seconds", .gauge, "Start time of the process since unix epoch in seconds.")
            out.sample("process_start_time_seconds", [:], start)
        }
    }
}
