import Foundation

/// A client of NEC BaaS object buckets (the todo loader's list): query, create, update
/// with etag, delete. Every request carries `X-Application-Id` and `X-Application-Key`.
///
/// Throws only ``ServiceError``. The service's error body format is unconfirmed, so
/// `.httpStatus` errors carry the status and a body excerpt (409 means an etag mismatch).
public struct BaaSClient: Sendable {
    /// Tenant, endpoint and application keys.
    public var configuration: BaaSConfiguration
    /// Sends each request.
    public var transport: any HTTPTransport
    /// The deadline of each request; nil uses the transport's default.
    public var timeout: Duration?

    /// Creates a client.
    public init(configuration: BaaSConfiguration, transport: any HTTPTransport, timeout: Duration? = nil) {
        self.configuration = configuration
        self.transport = transport
        self.timeout = timeout
    }

    /// Queries a bucket (`GET …/objects/{bucket}`); by default all objects, `updatedAt` ascending.
    public func query(bucket: String, _ query: BaaSQuery = BaaSQuery()) async throws -> BaaSQueryResult {
        var parameters: [(String, String)] = []
        if let conditions = query.conditions {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            do {
                parameters.append(("where", String(decoding: try encoder.encode(conditions), as: UTF8.self)))
            } catch {
                // A NaN or infinite number has no JSON form; the client throws only ServiceError.
                throw ServiceError.invalidRequest("where conditions cannot be encoded as JSON: \(error)")
            }
        }
        if !query.order.isEmpty { parameters.append(("order", query.order.joined(separator: ","))) }
        if let skip = query.skip { parameters.append(("skip", String(skip))) }
        if let limit = query.limit { parameters.append(("limit", String(limit))) }
        if query.includeCount { parameters.append(("count", "1")) }
        let response = try await send("GET", try url(bucket: bucket, query: parameters))
        return try JSONBodyDecoder.decode(BaaSQueryResult.self, from: response)
    }

    /// Creates an object (`POST …/objects/{bucket}`) and returns it as stored.
    public func create(bucket: String, fields: [String: JSONValue]) async throws -> BaaSObject {
        let response = try await send("POST", try url(bucket: bucket), body: fields)
        return try JSONBodyDecoder.decode(BaaSObject.self, from: response)
    }

    /// Updates fields of an object (`PUT …/{id}?etag=`); a stale etag is a 409 `.httpStatus`.
    public func update(bucket: String, id: String, fields: [String: JSONValue], etag: String? = nil) async throws -> BaaSObject {
        let response = try await send("PUT", try url(bucket: bucket, id: id, query: etag.map { [("etag", $0)] } ?? []), body: fields)
        return try JSONBodyDecoder.decode(BaaSObject.self, from: response)
    }

    /// Deletes an object (`DELETE …/{id}`); with `etag`, only that version.
    public func delete(bucket: String, id: String, etag: String? = nil) async throws {
        _ = try await send("DELETE", try url(bucket: bucket, id: id, query: etag.map { [("etag", $0)] } ?? []))
    }

    private func url(bucket: String, id: String? = nil, query: [(String, String)] = []) throws -> URL {
        var base = configuration.endpoint.absoluteString
        if !base.hasSuffix("/") { base += "/" }
        guard let endpoint = URL(string: base) else { throw ServiceError.invalidRequest("bad endpoint \(base)") }
        var path = "1/\(PercentEncoding.encode(configuration.tenantID))/objects/\(PercentEncoding.encode(bucket))"
        if let id { path += "/" + PercentEncoding.encode(id) }
        return try URLBuilder.url(endpoint, path: path, query: query)
    }

    private func send(_ method: String, _ url: URL, body: [String: JSONValue]? = nil) async throws -> HTTPResponse {
        var headers = HTTPHeaders()
        headers["X-Application-Id"] = configuration.applicationID
        headers["X-Application-Key"] = configuration.applicationKey
        headers["Accept"] = "application/json"
        if let token = configuration.sessionToken { headers["X-Session-Token"] = token }
        var payload: Data?
        if let body {
            headers["Content-Type"] = "application/json"
            do {
                payload = try JSONEncoder().encode(body)
            } catch {
                throw ServiceError.invalidRequest("fields cannot be encoded as JSON: \(error)")
            }
        }
        return try await transport.perform(HTTPRequest(method: method, url: url, headers: headers, body: payload, timeout: timeout))
    }
}
