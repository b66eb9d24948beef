import Foundation
import HeraldServices
import HeraldSubscribers

extension ArchiveReplay {
    /// What a service said when asked whether it already has a post (`herald replay --ask-service`).
    public enum ServiceAnswer: Sendable, Hashable {
        /// It has it: the id of what it holds (a BaaS object carrying the key).
        case present(String)
        /// It does not have it.
        case absent
        /// This service cannot be asked without posting; why.
        case cannotAsk(String)
        /// Asking failed (the service did not answer, or refused); why.
        case failed(String)
    }

    /// The plan with each candidate's ``Candidate/serviceAnswer`` filled in: a BaaS service is
    /// asked for an object whose `heraldKey` field is the candidate's key (the lookup its post
    /// service makes before a retry), one `GET` per key, one at a time; nothing is posted. The
    /// other kinds cannot answer by key or exact text without posting (see
    /// ``whyCannotAsk(_:)``), nor can the embedded sandbox, whose objects live only as long as
    /// the daemon that started it. Candidates that cannot be made are not asked.
    public func askServices(_ plan: Plan) async -> Plan {
        let directory = ServiceDirectory(configuration: configuration, sandbox: nil, transport: SchemeRoutingTransport())
        var answers: [String: ServiceAnswer] = [:]
        var result = plan
        for index in result.candidates.indices {
            let candidate = result.candidates[index]
            guard !candidate.failed, let key = candidate.key else { continue }
            let service = configuration.services[candidate.service]
            if let reason = Self.whyCannotAsk(service) {
                result.candidates[index].serviceAnswer = .cannotAsk(reason)
                continue
            }
            guard let bucket = candidate.bucket else {
                result.candidates[index].serviceAnswer = .cannotAsk("the rule makes no BaaS object")
                continue
            }
            let lookup = "\(candidate.service)\u{0}\(bucket)\u{0}\(key)"
            if let known = answers[lookup] {
                result.candidates[index].serviceAnswer = known
                continue
            }
            let answer: ServiceAnswer
            do {
                let client = try directory.baas(candidate.service)
                let query = BaaSQuery(conditions: [BaaSPostService.keyField: .string(key)], limit: 1)
                let found = try await client.query(bucket: bucket, query)
                answer = found.results.first.map { ServiceAnswer.present($0.id) } ?? .absent
            } catch {
                answer = .failed("\(error)")
            }
            answers[lookup] = answer
            result.candidates[index].serviceAnswer = answer
        }
        return result
    }

    /// Why a service of this configuration cannot say whether it has a post without posting it,
    /// or nil when it can (a BaaS service at a URL).
    public static func whyCannotAsk(_ service: ServiceConfiguration?) -> String? {
        switch service {
        case .baas(.url, _, _, _, _)?:
            return nil
        case .baas(.sandbox, _, _, _, _)?:
            return "the embedded sandbox keeps its objects only while the daemon that started it runs"
        case .twitter?:
            return "a twitter (v1.1) service has no lookup by key or text (its timelines are recent pages, where absence proves nothing); "
                + "a repeat is refused as a duplicate status"
        case .x?:
            return "X has no lookup by key, and its recent search matches words over 7 days, not exact text; "
                + "a repeat is refused as duplicate content"
        case .mastodon?:
            return "Mastodon answers an Idempotency-Key only to a new post (within the hour it keeps keys), never to a lookup"
        case .webhook?:
            return "a webhook receiver has no read API; the key is its webhook-id, so it can drop a repeat"
        case .tiqav?, nil:
            return "the service cannot post"
        }
    }
}
