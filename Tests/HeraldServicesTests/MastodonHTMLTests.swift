import HeraldServices
import Testing

@Suite struct MastodonHTMLTests {
    @Test func paragraphsAndBreaksBecomeLines() {
        #expect(MastodonHTML.plainText("<p>one<br>two<br/>three</p><p>four</p>") == "one\ntwo\nthree\n\nfour")
        #expect(MastodonHTML.plainText("<p>  spaced \n  out  </p>") == "spaced out")
    }

    @Test func entitiesAreDecodedAndUnknownOnesKept() {
        #expect(MastodonHTML.plainText("Fish &amp; chips &lt;3 &quot;q&quot; &#39;s&#x27; &#128512; &hellip;") == "Fish & chips <3 \"q\" 's' 😀 …")
        #expect(MastodonHTML.plainText("a &bogus; b &amp c &#xZZ; &#0;") == "a &bogus; b &amp c &#xZZ; \u{FFFD}")
    }

    @Test func nestedTagsKeepTheirTextAndLinksTheirWholeURL() {
        let html = #"<p>see <a href="https://example.com/a/very/long"><span class="invisible">https://</span><span class="ellipsis">example.com/a/ve</span><span class="invisible">ry/long</span></a> and <span class="h-card"><a href="https://x/@bob" class="u-url mention">@<span>bob</span></a></span> <a href="https://x/tags/swift" class="mention hashtag" rel="tag">#<span>swift</span></a></p>"#
        #expect(MastodonHTML.plainText(html) == "see https://example.com/a/very/long and @bob #swift")
    }

    @Test func emojiShortcodesStayAndScriptsVanish() {
        #expect(MastodonHTML.plainText("<p>hi :blobcat: 🐈</p><script>alert('x')</script><style>p{}</style><!-- c -->") == "hi :blobcat: 🐈")
    }

    @Test func brokenMarkupNeverTraps() {
        #expect(MastodonHTML.plainText("a < b and c<d") == "a < b and c<d")
        #expect(MastodonHTML.plainText("<p>unclosed <a href=\"x") == "unclosed <a href=\"x")
        #expect(MastodonHTML.plainText("<!-- never closed") == "")
        #expect(MastodonHTML.plainText("") == "")
        #expect(MastodonHTML.plainText("&") == "&")
        #expect(MastodonHTML.plainText("<p>日本語</p><p>テキスト</p>") == "日本語\n\nテキスト")
    }
}
