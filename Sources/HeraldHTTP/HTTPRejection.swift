/// Why the server refuses a request without handing it to its handler: the status it answers
/// with (the connection then closes) and a short reason sent as `{"error": reason}`.
struct HTTPRejection: Error, Sendable, Hashable {
    var status: Int
    var reason: String

    init(_ status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    static func badRequest(_ reason: String) -> HTTPRejection { HTTPRejection(400, reason) }
}
