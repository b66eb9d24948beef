import Foundation

/// Turns a non-2xx response into a typed ``ServiceError``.
enum ResponseValidation {
    /// Returns `response` when it is 2xx; otherwise throws `.rateLimited` for 429 (or a
    /// body with code 88) and `.httpStatus` for the rest, with the service's error codes.
    static func requireSuccess(_ response: HTTPResponse, now: Date = Date()) throws -> HTTPResponse {
        if response.isSuccess { return response }
        let details = apiErrors(in: response.body)
        let rateLimit = RateLimit(headers: response.headers, now: now)
        let excerpt = ServiceError.excerpt(of: response.body)
        if response.status == 429 || details.contains(where: { $0.code == 88 }) {
            throw ServiceError(
                kind: .rateLimited, message: "rate limit exceeded", status: response.status,
                apiErrors: details, rateLimit: rateLimit, bodyExcerpt: excerpt)
        }
        let reason = details.first?.message ?? "HTTP status \(response.status)"
        throw ServiceError(
            kind: .httpStatus, message: reason, status: response.status, apiErrors: details,
            rateLimit: rateLimit, bodyExcerpt: excerpt)
    }

    /// Parses `{"errors":[{"code":N,"message":"…"}]}` leniently; any other body gives none.
    static func apiErrors(in body: Data) -> [APIErrorDetail] {
        guard !body.isEmpty,
            let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let errors = object["errors"] as? [[String: Any]]
        else { return [] }
        return errors.compactMap { entry in
            guard let code = (entry["code"] as? Int) ?? (entry["code"] as? String).flatMap({ Int($0) })
            else { return nil }
            return APIErrorDetail(code: code, message: entry["message"] as? String ?? "")
        }
    }
}
