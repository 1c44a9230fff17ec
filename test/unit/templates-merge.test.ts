// The rules of merge templates (domain/templates/merge.ts) and how a template is cut for
// merged batches (services/templates/merged-render.ts splitTemplate): only escaping tags,
// the variables a merge needs, what counts as missing, and values escaped into the HTML.
import { mergeTemplate, missingVariables, requiredVariables, templateProblem } from '../../domain/templates/merge';
import { splitTemplate } from '../../services/templates/merged-render';

describe('merge templates', () => {
  it('refuses unescaped tags and partials, whatever the delimiters', () => {
    expect(templateProblem('<p>{{name}}</p>')).toBeNull();
    expect(templateProblem('<p>{{{name}}}</p>')).toMatch(/unescaped tag \(\{\{\{name\}\}\}\)/);
    expect(templateProblem('<p>{{&name}}</p>')).toMatch(/unescaped tag/);
    expect(templateProblem('{{=<% %>=}}<p><%{name}%></p>')).toMatch(/unescaped tag/);
    expect(templateProblem('{{=<% %>=}}<p><%&name%></p>')).toMatch(/unescaped tag/);
    expect(templateProblem('<p>{{>footer}}</p>')).toMatch(/partial/);
    expect(templateProblem('{{#items}}<p>{{{.}}}</p>{{/items}}')).toMatch(/unescaped tag/);
    expect(templateProblem('<p>{{#open}}never closed</p>')).toMatch(/not a valid Mustache template/);
    expect(templateProblem('<p>{{bad name!}}</p>')).toMatch(/not a valid name/);
  });

  it('needs every tag outside sections and every section name, once each', () => {
    expect(requiredVariables('{{b}} {{a}} {{a}} {{#list}}{{item}}{{/list}} {{^flag}}x{{/flag}} {{c.d}}')).toEqual([
      'a',
      'b',
      'c',
      'flag',
      'list',
    ]);
  });

  it('counts absent and null as missing, and empty text only where told to', () => {
    expect(missingVariables(['a', 'b', 'c'], { a: '', b: null })).toEqual(['b', 'c']);
    expect(missingVariables(['a', 'b'], { a: '  ', b: 0 }, { emptyIsMissing: true })).toEqual(['a']);
    expect(missingVariables(['toString'], {})).toEqual(['toString']);
  });

  it('escapes every value into the HTML', () => {
    expect(mergeTemplate('<p title="{{t}}">{{v}}</p>', { t: '"><script>', v: "<img src=x> & '" })).toBe(
      '<p title="&quot;&gt;&lt;script&gt;">&lt;img src&#x3D;x&gt; &amp; &#39;</p>',
    );
  });
});

describe('cutting a template for merged batches', () => {
  it('repeats the body and keeps the head once', () => {
    const t = splitTemplate('<html><head><style>p{}</style></head><body class="x"><p>{{a}}</p></body></html>');
    expect(t).toEqual({
      before: '<html><head><style>p{}</style></head><body class="x">',
      body: '<p>{{a}}</p>',
      after: '</body></html>',
      groupable: true,
    });
    expect(splitTemplate('<p>{{a}}</p>')).toMatchObject({
      before: '',
      body: '<p>{{a}}</p>',
      after: '',
      groupable: true,
    });
  });

  it('renders alone what depends on the whole document', () => {
    expect(splitTemplate('<html><head><title>{{a}}</title></head><body>x</body></html>').groupable).toBe(false);
    expect(splitTemplate('<style>.f{position: fixed}</style><p>{{a}}</p>').groupable).toBe(false);
    expect(splitTemplate('<style>@page :first { margin: 0 }</style><p>{{a}}</p>').groupable).toBe(false);
    expect(splitTemplate('<style>h1{counter-increment: h}</style><p>{{a}}</p>').groupable).toBe(false);
  });
});
