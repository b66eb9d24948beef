import HeraldNATS

extension ClusterError {
    /// What a HeraldNATS error means to the cluster: worth retrying (no server, no answer, no
    /// JetStream leader yet), a refusal, or a message the server will never take.
    static func from(_ error: any Error, _ doing: String) -> ClusterError {
        switch error {
        case let error as ClusterError:
            return error
        case is CancellationError:
            return .cancelled
        case let error as NATSError:
            switch error.kind {
            case .cancelled: return .cancelled
            case .payloadTooLarge, .invalidSubject: return .permanent("\(doing): \(error.message)")
            case .serverError: return .refused("\(doing): the server answered -ERR \(error.message)")
            case .invalidResponse, .protocolViolation: return .invalidResponse("\(doing): \(error.message)")
            case .invalidConfiguration: return .refused("\(doing): \(error.message)")
            case .noResponders:
                return .unavailable("\(doing): \(error.message) (is nats-server running with -js, and has its cluster elected a leader?)")
            case .connectionFailed, .notConnected, .closed, .timeout, .bufferFull: return .unavailable("\(doing): \(error.message)")
            }
        case let error as JetStreamError:
            // 503 / 10008: JetStream is there but has no leader (a cluster electing one).
            // 10005: a leader just elected may not know every peer yet ("no suitable peers for
            // placement, peer offline"); asking again helps. It is also the answer when the
            // cluster has fewer servers than the replicas, so the connect wait ends that one.
            if error.code == 503 || error.errorCode == JetStreamError.clusterNotAvailable {
                return .unavailable("\(doing): \(error.description)")
            }
            if error.errorCode == JetStreamError.noSuitablePeers {
                return .unavailable("\(doing): \(error.description) (does the cluster have as many servers as the replicas asked for?)")
            }
            if error.errorCode == JetStreamError.messageTooLarge {
                // The stream's limit (another node's smaller cluster.maxPayload): a retry cannot help.
                return .permanent("\(doing): \(error.description)")
            }
            return .refused("\(doing): \(error.description)")
        case let error as KeyValueError:
            return .refused("\(doing): \(error.description)")
        default:
            return .refused("\(doing): \(error)")
        }
    }
}
