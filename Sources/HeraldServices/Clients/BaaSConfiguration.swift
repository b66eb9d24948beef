import Foundation

/// Where an NEC BaaS tenant lives and how the application identifies itself.
public struct BaaSConfiguration: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The API endpoint, e.g. `https://baas.example.com/api/` (a missing trailing slash is added).
    public var endpoint: URL
    /// The tenant id.
    public var tenantID: String
    /// Sent as `X-Application-Id`.
    public var applicationID: String
    /// Sent as `X-Application-Key`.
    public var applicationKey: String
    /// Sent as `X-Session-Token` when logged in.
    public var sessionToken: String?

    /// Creates a configuration.
    public init(endpoint: URL, tenantID: String, applicationID: String, applicationKey: String, sessionToken: String? = nil) {
        self.endpoint = endpoint
        self.tenantID = tenantID
        self.applicationID = applicationID
        self.applicationKey = applicationKey
        self.sessionToken = sessionToken
    }

    /// Redacts the application key and session token so a configuration can be logged safely.
    public var description: String {
        "BaaSConfiguration(endpoint: \(endpoint), tenantID: \(tenantID), applicationID: \(applicationID), "
            + "applicationKey: <redacted>, sessionToken: \(sessionToken == nil ? "none" : "<redacted>"))"
    }

    /// The same fields as ``description``, so `dump` and debuggers show no secret either.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "endpoint": endpoint, "tenantID": tenantID, "applicationID": applicationID, "applicationKey": "<redacted>",
            "sessionToken": sessionToken == nil ? "none" : "<redacted>",
        ])
    }
}
