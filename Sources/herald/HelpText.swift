import HeraldRuntime

/// The text of `--help` for each command.
enum HelpText {
    static func text(for topic: String?) -> String {
        switch topic {
        case "run": """
            USAGE: herald run [--config PATH] [--for DURATION]

            Validates the configuration, starts the sandbox if a service or a feed uses it, then runs the
            loaders on their schedules and the subscribers until SIGINT or SIGTERM (or DURATION),
            drains the bus and exits 0.

            SIGHUP reloads the configuration (as 'herald reload' does): an invalid file changes
            nothing; a valid one is applied part by part, and log files and archives are reopened.
            With NOTIFY_SOCKET set (systemd's Type=notify), it sends READY=1, RELOADING=1,
            STOPPING=1, STATUS= and, with WatchdogSec=, WATCHDOG=1 while the bus and loaders work.

            OPTIONS:
              --config PATH      the configuration (default: config.json)
              --for DURATION     stop by itself after DURATION (250ms, 30s, 5m, 1h)
              -h, --help         show this help
            """
        case "check": """
            USAGE: herald check [--config PATH] [--print]
                   herald check [--config PATH] --rule NAME --event FILE

            Validates the configuration and prints every problem found. Exits 0 when it is
            valid and 2 when it is not.

            With --print, prints the effective configuration as JSON: every default filled in,
            every secret masked (********), the file's SHA-1.

            With --rule and --event, renders the post rule NAME against the archived event in
            FILE (a line as 'herald tail --json' prints it) and prints what it would post: the
            text or object, the service, the idempotency key and what the outbox says of it.
            Nothing is posted.

            OPTIONS:
              --config PATH      the configuration (default: config.json)
              --print            print the effective configuration
              --rule NAME        the post rule to render
              --event FILE       the archived event to render it against
              -h, --help         show this help
            """
        case "sandbox": """
            USAGE: herald sandbox [--port N] [--config PATH]

            Runs the loopback emulator of the three services alone and prints its URL, until
            SIGINT or SIGTERM. With --config, its sandbox section and its services' credentials
            are used. Keys and tokens are not printed (GET /_sandbox/config shows the
            sandbox's own defaults, never configured secrets).

            OPTIONS:
              --port N           the port (default: the config's, else any free port)
              --config PATH      take the sandbox settings from this configuration
              -h, --help         show this help
            """
        case "tail": """
            USAGE: herald tail PATH [--topic PATTERN]... [--follow] [--json]

            Prints a JSON Lines archive written by a file subscriber, oldest first, across its
            rotated files (events.2.jsonl, events.1.jsonl, then events.jsonl): one line per event
            (time, topic, sender, sequence number, event). A line that is not an envelope, or a
            torn last line, is shown as such.

            OPTIONS:
              --topic PATTERN    only events on matching topics (NATS patterns; repeatable)
              -f, --follow       keep printing new events as they are written, until SIGINT or SIGTERM
              --json             print the archived lines as they are
              -h, --help         show this help
            """
        case "post": """
            USAGE: herald post TEXT [--media FILE] [--reply-to ID] [--config PATH] [--service NAME]

            Posts one status through the configuration's twitter service (v1.1 or X API v2) or,
            with --service or when there is no twitter service, its mastodon service, with an MP4
            video if --media is given. The video is checked against the service's limits first
            (MP4, at most 15 MB, 0.5 to 30 s, 32x32 to 1280x1024, aspect 1:3 to 3:1, at most 40
            fps), then sent with the chunked upload (on Mastodon, uploaded and waited for until
            processed); a progress bar shows on a terminal, plain lines otherwise. Prints the new status's id. A service pointing at the embedded sandbox
            starts it for this post only (run 'herald sandbox' to keep one running).

            SIGINT (Ctrl-C) or SIGTERM stops the upload or the request in flight; one line then
            says what was done (nothing posted; the video uploaded but no status posted; or the
            status sent without an answer, so it may have been posted). A post that completes
            as the signal comes is reported as posted.

            OPTIONS:
              --media FILE       attach this MP4 video
              --reply-to ID      post as a reply to the post (status) with this id
              --config PATH      the configuration (default: config.json)
              --service NAME     the twitter or mastodon service to use (default: the only
                                 twitter service, else the only mastodon service)
              -h, --help         show this help

            Exit codes: 0 posted, 1 the post failed, 2 usage or configuration error,
            130 interrupted by SIGINT, 143 interrupted by SIGTERM.
            """
        case "status": """
            USAGE: herald status [--url URL | --config PATH]

            Asks a running daemon's status endpoint (the config's "http" section) for /status
            and prints its loaders as a table (state, last run, result, next run, pulls, new
            items) and what waits in each outbox. Times are relative to the daemon's clock.

            OPTIONS:
              --url URL          the endpoint, e.g. http://127.0.0.1:8420 (as 'herald run' prints it)
              --config PATH      read the endpoint's address from this configuration (default: config.json)
              -h, --help         show this help

            Exit codes: 0 shown, 1 the daemon could not be reached, 2 usage or configuration error.
            """
        case "reload": """
            USAGE: herald reload [--url URL | --config PATH]

            Asks the running daemon to reload its configuration file (POST /-/reload on its
            status endpoint, as SIGHUP does) and prints what changed. An invalid file changes
            nothing: every problem is printed with its JSON path. What only a restart changes
            (http, sandbox, state, cluster) is said.

            OPTIONS:
              --url URL          the endpoint, e.g. http://127.0.0.1:8420 (as 'herald run' prints it)
              --config PATH      read the endpoint's address from this configuration (default: config.json)
              -h, --help         show this help

            Exit codes: 0 reloaded, 1 the daemon could not be reached (or a part failed to
            start), 2 the file is invalid (nothing changed) or a usage error.
            """
        case "replay": """
            USAGE: herald replay ARCHIVE [--config PATH] [--rule NAME] [--since TIME] [--until TIME] [--ask-service] [--post]

            Runs the configuration's post rules over the events of an archive (its rotated files
            first, as 'herald tail' reads them) and prints, for each post a rule would make, the
            rendered text or object, the service, the idempotency key and whether the rule's
            outbox has it already (pending, sent or failed). Lines that are not events (corrupt,
            or torn) are skipped and counted. Nothing is posted unless --post is given: then the
            new posts go through the outbox, exactly once, as the daemon would have made them
            (posts missed during an outage). With --ask-service, each service is asked too
            whether it already has the post, where that needs no post: a BaaS service at a URL
            (one GET per key, for an object whose heraldKey is the key). Twitter, X, Mastodon,
            webhooks and the embedded sandbox cannot be asked; the output says why.

            OPTIONS:
              --config PATH      the configuration (default: config.json)
              --rule NAME        only this post rule
              --since TIME       only events at or after TIME (2026-12-01T08:00:00Z, 2026-12-01, 2h ago as 2h)
              --until TIME       only events at or before TIME
              --ask-service      ask the services that can answer without posting whether they have it
              --post             post the new ones through the outbox
              -h, --help         show this help

            Exit codes: 0 done, 1 the archive is missing or a post failed, 2 usage or configuration error.
            """
        default: """
            USAGE: herald [COMMAND] [OPTIONS]

            Herald pulls a timeline, Tiqav images and a todo bucket on schedules and fans every
            finished or failed load out as typed events to its subscribers.

            COMMANDS:
              run                run the daemon (the default)
              check              validate a configuration
              sandbox            run the service emulator alone
              tail PATH          print (and follow) an event archive
              post TEXT          post one status (optionally with a video)
              status             show a running daemon's loaders and outbox
              reload             make a running daemon reload its configuration
              replay ARCHIVE     show (or post) what the post rules make of archived events
              help [COMMAND]     show help

            OPTIONS:
              -h, --help         show help (also after a command)
              -V, --version      show the version

            Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.
            Version \(HeraldVersion.current).
            """
        }
    }
}
