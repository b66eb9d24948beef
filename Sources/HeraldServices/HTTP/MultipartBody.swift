import Foundation

/// A `multipart/form-data` body: text fields and one file field.
struct MultipartBody {
    let boundary: String
    let data: Data

    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    init(fields: [(String, String)], fileField: String, fileData: Data, fileName: String = "blob",
         fileType: String = "application/octet-stream", boundary: String = "herald-\(UUID().uuidString)") {
        self.boundary = boundary
        var body = Data()
        for (name, value) in fields {
            body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8))
        }
        body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(fileField)\"; filename=\"\(fileName)\"\r\n".utf8))
        body.append(Data("Content-Type: \(fileType)\r\n\r\n".utf8))
        body.append(fileData)
        body.append(Data("\r\n--\(boundary)--\r\n".utf8))
        self.data = body
    }
}
