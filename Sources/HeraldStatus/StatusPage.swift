import Foundation

/// `GET /`: the status page, one self-contained HTML document.
enum StatusPage {
    static let html = Data("""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><title>herald status</title></head>
    <body><h1>herald</h1><ul>
    <li><a href="/metrics">/metrics</a></li><li><a href="/status">/status</a></li>
    <li><a href="/events">/events</a></li><li><a href="/healthz">/healthz</a></li><li><a href="/readyz">/readyz</a></li>
    </ul></body></html>

    """.utf8)
}
