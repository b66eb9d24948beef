import Foundation

/// Reads X API v2 answers: errors in the problem-details shape (`{"title","detail","type","status"}`,
/// RFC 7807), in `{"errors":[…]}` (problems, or `{"code","message"}` on a 429), and a 200
/// whose body holds `errors` but no `data`.
enum XResponse {
    /// The code ``XClient`` gives the "duplicate content" refusal of `POST /2/tweets`: the code
    /// v1.1 gave the same refusal ("Status is a duplicate"), so the post scheduler treats both alike.
    static let duplicateCode = 187

    /// Returns `response` when it is 2xx; otherwise throws `.rateLimited` for 429 and
    /// `.httpStatus` with the problem's title and detail for the rest.
    static func requireSuccess(_ response: HTTPResponse, now: Date = Date()) throws -> HTTPResponse {
        if response.isSuccess { return response }
        let problems = self.problems(in: response.body)
        let rateLimit = RateLimit(headers: response.headers, now: now)
        let excerpt = ServiceError.excerpt(of: response.body)
        var details = problems.map { APIErrorDetail(code: $0.code ?? 0, message: $0.text) }
        if response.status == 429 || details.contains(where: { $0.code == 88 }) {
            throw ServiceError(kind: .rateLimited, message: "rate limit exceeded", status: response.status, apiErrors: details,
                               rateLimit: rateLimit, bodyExcerpt: excerpt)
        }
        if response.status == 403, problems.contains(where: { $0.text.lowercased().contains("duplicate content") }) {
            details.insert(APIErrorDetail(code: duplicateCode, message: "duplicate content"), at: 0)
        }
        var reason = problems.isEmpty ? "HTTP status \(response.status)" : problems.prefix(3).map(\.text).joined(separator: "; ")
        if response.status == 401 {
            reason = "the service refused the credentials (401): \(reason); the token may be revoked or the keys wrong"
        }
        throw ServiceError(kind: .httpStatus, message: reason, status: response.status, apiErrors: details,
                           rateLimit: rateLimit, bodyExcerpt: excerpt)
    }

    /// Decodes `type` from a 2xx answer; a body with `errors` and no `data` (a 200 that reports
    /// only problems) is a `.decoding` error naming the first problem.
    static func decode<T: Decodable>(_ type: T.Type, from response: HTTPResponse) throws -> T {
        if let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
           object["data"] == nil, object["errors"] != nil, object["meta"] == nil {
            let first = problems(in: response.body).first?.text ?? "errors"
            throw ServiceError.decoding("the answer holds errors and no data: \(first)", location: "errors", body: response.body)
        }
        return try JSONBodyDecoder.decode(type, from: response)
    }

    struct Problem {
        var code: Int?
        var text: String
    }

    /// Problems in either shape; none for any other body.
    static func problems(in body: Data) -> [Problem] {
        guard !body.isEmpty, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return [] }
        func problem(_ entry: [String: Any]) -> Problem? {
            let code = (entry["code"] as? Int) ?? (entry["code"] as? String).flatMap { Int($0) }
            let title = entry["title"] as? String
            let detail = (entry["detail"] as? String) ?? (entry["message"] as? String)
            let text = [title, detail].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ": ")
            guard code != nil || !text.isEmpty else { return nil }
            return Problem(code: code, text: text)
        }
        // The problem itself first (`title`, `detail`), then the entries of `errors`.
        let top = object["title"] != nil || object["detail"] != nil ? problem(object).map { [$0] } ?? [] : []
        return top + ((object["errors"] as? [[String: Any]])?.compactMap(problem) ?? [])
    }
}
