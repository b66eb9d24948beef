import Foundation
import HeraldRuntime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Past a file-size limit (`ulimit -f`) a write then fails with EFBIG, which the file sink
// reports on the bus like a full disk. By default the kernel's SIGXFSZ would kill the daemon
// instead: it is aimed at the writing thread, and only the concurrency pool's threads block it.
signal(SIGXFSZ, SIG_IGN)

// The herald command: parse, dispatch, exit with 0 (ok), 1 (runtime failure) or 2 (usage or config).
let status: Int32
do {
    switch try CommandLineParser.parse(Array(CommandLine.arguments.dropFirst())) {
    case .version:
        Terminal.out("herald \(HeraldVersion.current)")
        status = 0
    case .help(let topic):
        Terminal.outLines(HelpText.text(for: topic))
        status = 0
    case .check(let config, let print, let rule, let event):
        if let rule, let event {
            status = await Commands.checkRule(config: config, rule: rule, event: event)
        } else {
            status = print ? Commands.printConfiguration(config: config) : Commands.check(config: config)
        }
    case .reload(let url, let config):
        status = await Commands.reload(url: url, config: config)
    case .replay(let options):
        status = await Commands.replay(options)
    case .run(let config, let duration):
        status = await Commands.run(config: config, duration: duration)
    case .sandbox(let port, let config):
        status = await Commands.sandbox(port: port, config: config)
    case .post(let text, let media, let config, let service, let replyTo):
        status = await Commands.post(text: text, media: media, config: config, service: service, replyTo: replyTo)
    case .status(let url, let config):
        status = await Commands.status(url: url, config: config)
    case .tail(let path, let topics, let follow, let json):
        status = await Commands.tail(path: path, topics: topics, follow: follow, json: json)
    }
} catch {
    Terminal.err("herald: \(error.message)")
    status = 2
}
exit(status)
