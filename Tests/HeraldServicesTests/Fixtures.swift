import Foundation

/// Bodies in the services' wire formats, written by hand for parser tests.
enum Fixtures {
    static let timelineJSON = """
        [{"created_at":"Wed Oct 10 20:19:24 +0000 2018","id":1050118621198921728,"id_str":"1050118621198921728",
          "text":"To make room for more expression, we will now count all emojis as equal 🎉","source":"web",
          "in_reply_to_status_id_str":null,"entities":{"hashtags":[]},
          "user":{"id":2244994945,"id_str":"2244994945","name":"Twitter Dev","screen_name":"TwitterDev"}},
         {"user":{"screen_name":"herald","name":"ヘラルド","id_str":"9007199254740993"},"text":"日本語のテキスト",
          "id_str":"9007199254740993","created_at":"Thu Oct 11 01:02:03 +0900 2018"}]
        """

    static let timelineXML = """
        <?xml version="1.0" encoding="UTF-8"?>
        <statuses type="array">
          <status>
            <created_at>Wed Oct 10 20:19:24 +0000 2018</created_at>
            <id>1050118621198921728</id>
            <text>
              Fish &amp; chips &lt;3 🍟
            </text>
            <source>&lt;a href="http://x"&gt;web&lt;/a&gt;</source>
            <truncated>false</truncated>
            <unknown><nested>ignored</nested></unknown>
            <user>
              <id>2244994945</id>
              <name>Twitter Dev</name>
              <screen_name>TwitterDev</screen_name>
              <location>Internet</location>
            </user>
          </status>
          <status>
            <created_at>Thu Oct 11 01:02:03 +0900 2018</created_at>
            <id>9007199254740993</id>
            <in_reply_to_status_id>1050118621198921728</in_reply_to_status_id>
            <text><![CDATA[日本語 & more]]></text>
            <user><id>1</id><name>ヘラルド</name><screen_name>herald</screen_name></user>
          </status>
        </statuses>
        """
}
