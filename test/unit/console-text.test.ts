// How the console shows text it did not write (api/console/text.ts): escaped, isolated, and
// with bidi controls, other format characters, control characters and (in one-line text)
// line breaks shown as marks that name them, so an agent's text cannot read as something else.
import { labelText, shownAddress, shownText } from '../../api/console/text';

describe('console text', () => {
  it('escapes markup and isolates the text', () => {
    expect(shownText('<script>alert("x")</script> & \'quotes\'', 'single_line')).toBe(
      '<bdi>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;</bdi>',
    );
    expect(shownText(null, 'single_line')).toBe('');
    expect(shownText('', 'multi_line')).toBe('');
  });

  it('shows a bidi override as a mark naming it, so the text no longer reads reversed', () => {
    const html = shownText('invoice\u202Efdp.exe', 'single_line');
    expect(html).not.toContain('\u202E');
    expect(html).toBe(
      '<bdi>invoice<span class="hidden-char" title="U+202E right-to-left override"><span class="sr-only">hidden character </span>U+202E</span>fdp.exe</bdi>',
    );
  });

  it('marks every hidden character, keeps joiners inside words and line breaks in text of several lines', () => {
    const many = shownText('a\u200Bb\u2066c\u2069d\u{E0041}e\u00ADf', 'multi_line');
    for (const code of ['U+200B', 'U+2066', 'U+2069', 'U+E0041', 'U+00AD']) expect(many).toContain(`>${code}</span>`);
    expect(many).not.toMatch(/[\u200B\u2066\u2069\u00AD]|\u{E0041}/u);
    expect(shownText('Line one\nLine two', 'multi_line')).toBe('<bdi>Line one\nLine two</bdi>');
    expect(shownText('Line one\nLine two', 'single_line')).toContain('title="U+000A line feed"');
    expect(shownText('می\u200Cخواهم', 'single_line')).toBe('<bdi>می\u200Cخواهم</bdi>');
  });

  it('labels for attributes are plain text with [U+XXXX] marks', () => {
    expect(labelText('Ada\u202ELovelace\nX')).toBe('Ada[U+202E]Lovelace[U+000A]X');
    expect(labelText(undefined)).toBe('');
  });

  it('an address shows each printed line as one line', () => {
    expect(
      shownAddress({
        name: 'Ada\nEvil Corp',
        line1: '1 Main St',
        city: 'Austin',
        state: 'TX',
        zip: '78701',
        country: 'US',
      }),
    ).toBe(
      '<bdi>Ada<span class="hidden-char" title="U+000A line feed"><span class="sr-only">hidden character </span>U+000A</span>Evil Corp</bdi><br>' +
        '<bdi>1 Main St</bdi><br><bdi>Austin, TX 78701</bdi>',
    );
  });
});
