import { describe, expect, it } from 'vitest';
import { concepts } from './search-text.js';
import { stem, ToolIndex, ToolIndexCache, tokenize } from './tool-search.js';

describe('tokenize', () => {
  it('splits names on _, -, . and camelCase, lowercases, drops stopwords and stems', () => {
    expect(tokenize('get_file_info')).toEqual(['file', 'info']);
    expect(tokenize('list-directory.withSizes')).toEqual(['list', 'directori', 'size']);
    expect(tokenize('readMultipleFiles')).toEqual(['read', 'multipl', 'file']);
    expect(tokenize('HTMLParser')).toEqual(['html', 'parser']);
    expect(tokenize('Show the files of the repository')).toEqual(['show', 'file', 'repositori']);
  });

  it('makes plurals, -ing and -ed forms meet their base word', () => {
    for (const [a, b] of [
      ['files', 'file'],
      ['entities', 'entity'],
      ['directories', 'directory'],
      ['staged', 'stage'],
      ['staging', 'stage'],
      ['committed', 'commit'],
      ['commits', 'commit'],
      ['branches', 'branch'],
      ['matches', 'match'],
      ['running', 'run'],
    ])
      expect(stem(a as string), `${a} ~ ${b}`).toBe(stem(b as string));
    // Not every final s is a plural.
    expect(stem('status')).toBe('status');
    expect(stem('process')).toBe('process');
  });

  it('makes derivations and British spellings meet, and keeps apart what differs', () => {
    for (const [a, b] of [
      ['deletion', 'delete'],
      ['configuration', 'configure'],
      ['management', 'manage'],
      ['automatically', 'automatic'],
      ['creation', 'create'],
      ['notifications', 'notify'],
      ['analysis', 'analyze'],
      ['analyse', 'analyze'],
      ['memorised', 'memorize'],
      ['organisation', 'organization'],
      ['replies', 'reply'],
    ])
      expect(stem(a as string), `${a} ~ ${b}`).toBe(stem(b as string));
    // Porter2's exceptions: "general" is not "generate", "news" not "new", a product's final s stays.
    expect(stem('general')).not.toBe(stem('generate'));
    expect(stem('kubernetes')).toBe('kubernetes');
    // -ise that is not -ize stays itself.
    expect(stem('advise')).toBe('advis');
    expect(stem('user')).toBe('user');
  });

  it('drops contractions rather than leaving stray letters', () => {
    expect(tokenize("the edits I haven't staged")).toEqual(['edit', 'stage']);
    expect(tokenize("Alice's profile")).toEqual(['alic', 'profil']);
  });

  it('turns Chinese runs into character bigrams, a single character into itself, beside English words', () => {
    expect(tokenize('查询余票')).toEqual(['查询', '询余', '余票']);
    expect(tokenize('票')).toEqual(['票']);
    expect(tokenize('查询12306余票信息')).toEqual(['查询', '12306', '余票', '票信', '信息']);
    expect(tokenize('通过 station_code 查询')).toEqual(['通过', 'station', 'code', '查询']);
  });
});

const tools = [
  { name: 'fs__read_text_file', description: 'Read the complete contents of a file as text.', inputSchema: { properties: { path: {} } } },
  { name: 'fs__write_file', description: 'Create a new file or overwrite an existing file with new content.' },
  {
    name: 'git__git_log',
    description: 'Shows the commit logs',
    inputSchema: { properties: { max_count: { description: 'How many commits' } } },
  },
  { name: 'train__get_tickets', description: '查询12306余票信息。' },
  { name: 'train__get_train_route_stations', description: '查询特定列车车次在指定区间内的途径车站、到站时间。' },
  {
    name: 'time__convert_time',
    description: 'Convert time between timezones',
    inputSchema: { properties: { target_timezone: { description: 'Target IANA timezone name' } } },
  },
];

describe('ToolIndex', () => {
  const index = new ToolIndex(tools);

  it('ranks by name, description and parameters', () => {
    expect(index.search('read a file')[0]?.tool.name).toBe('fs__read_text_file');
    expect(index.search('commit history logs')[0]?.tool.name).toBe('git__git_log');
    // Only a parameter's description says "IANA".
    expect(index.search('IANA')[0]?.tool.name).toBe('time__convert_time');
  });

  it('weighs a word in the name above the same word in a description', () => {
    const hits = index.search('write');
    expect(hits[0]?.tool.name).toBe('fs__write_file');
  });

  it('matches Chinese queries against Chinese descriptions', () => {
    expect(index.search('火车票余票')[0]?.tool.name).toBe('train__get_tickets');
    expect(index.search('列车经停车站')[0]?.tool.name).toBe('train__get_train_route_stations');
  });

  it('leaves out tools that match nothing, honours the limit, and answers nothing to stopwords alone', () => {
    expect(index.search('file', 1)).toHaveLength(1);
    expect(index.search('file').map((h) => h.tool.name)).toEqual(['fs__write_file', 'fs__read_text_file']);
    expect(index.search('the of and')).toEqual([]);
    expect(index.search('kubernetes')).toEqual([]);
    expect(new ToolIndex([]).search('file')).toEqual([]);
  });

  it('keeps equal scores in list order, picks the best of any limit, and carries nothing from one search to the next', () => {
    const same = Array.from({ length: 30 }, (_, i) => ({ name: `copy_${i}`, description: 'Send an email message' }));
    const twins = new ToolIndex([...same, { name: 'send_email', description: 'Send an email message' }]);
    const first = twins.search('email', 3);
    expect(first.map((h) => h.tool.name)).toEqual(['send_email', 'copy_0', 'copy_1']);
    expect(first[1]?.score).toBe(first[2]?.score);
    expect(twins.search('email', 40).map((h) => h.tool.name)).toEqual(['send_email', ...same.map((t) => t.name)]);
    expect(twins.search('email', 3, (t) => t.name.endsWith('7')).map((h) => h.tool.name)).toEqual(['copy_7', 'copy_17', 'copy_27']);
    // Searched again, after other searches, the scores are the same, not added to the last ones.
    twins.search('message email send');
    expect(twins.search('email', 3)).toEqual(first);
    expect(twins.search('parcel')).toEqual([]);
  });
});

describe('ToolIndexCache', () => {
  it('builds once per list identity and once per content', () => {
    const cache = new ToolIndexCache();
    const list = [...tools];
    const first = cache.get(list);
    expect(cache.get(list)).toBe(first);
    // A new list with the same tools (as a fresh tools/list gives): the same index.
    expect(cache.get(tools.map((t) => ({ ...t })))).toBe(first);
    expect(cache.builds).toBe(1);
    // The list changed: a new index that knows the new tool.
    const changed = [...tools, { name: 'fs__move_file', description: 'Move or rename files' }];
    expect(cache.get(changed).search('rename')[0]?.tool.name).toBe('fs__move_file');
    expect(cache.builds).toBe(2);
  });
});

describe('query understanding', () => {
  it('normalises width and keeps a brand the vocabulary knows as one word', () => {
    expect(tokenize('ＧｉｔＨｕｂ　ＰＲ')).toEqual(['github', 'pr']);
    expect(tokenize('GitHub pull requests')).toEqual(['github', 'pull', 'request']);
    // An identifier is still split.
    expect(tokenize('getFileInfo')).toEqual(['file', 'info']);
    // "news" is not the plural of "new".
    expect(stem('news')).not.toBe(stem('new'));
  });

  it('says the same concept for English synonyms, phrases and Chinese words', () => {
    const same = (a: string, b: string, concept: string) => {
      expect(concepts(a), a).toContain(concept);
      expect(concepts(b), b).toContain(concept);
    };
    same('make a new folder', 'Create a new directory', '~directory');
    same('open a PR', 'Create a new pull request', '~pull_request');
    same('新建一个工单', 'Create a new issue', '~issue');
    same('新建一个工单', 'Create a new issue', '~create');
    same('给网页截个图', 'Take a screenshot of the current page', '~screenshot');
    same('合并请求', 'merge request', '~pull_request');
    // A phrase a stop word interrupts is still found ("save my work").
    expect(concepts('save my work to version control')).toEqual(expect.arrayContaining(['~commit', '~git']));
    // The longest Chinese word wins: 几点 is the time, not a click (点).
    expect(concepts('现在几点')).toContain('~time');
    expect(concepts('现在几点')).not.toContain('~click');
  });
});

describe('ToolIndex with the vocabulary', () => {
  const list = [
    { name: 'fs__create_directory', description: 'Create a new directory or ensure a directory exists.' },
    { name: 'fs__write_file', description: 'Create a new file or completely overwrite an existing file with new content.' },
    { name: 'gh__create_pull_request', description: 'Create a new pull request in a GitHub repository' },
    { name: 'gh__create_issue', description: 'Create a new issue in a GitHub repository' },
    { name: 'web__take_screenshot', description: 'Take a screenshot of the current page' },
  ];
  const index = new ToolIndex(list, { separator: '__', services: new Map([['web', 'Headless Chromium']]) });

  it('finds a tool from other words and from Chinese', () => {
    expect(index.search('make a folder')[0]?.tool.name).toBe('fs__create_directory');
    expect(index.search('open a PR')[0]?.tool.name).toBe('gh__create_pull_request');
    expect(index.search('在仓库里提个工单')[0]?.tool.name).toBe('gh__create_issue');
    expect(index.search('截个图')[0]?.tool.name).toBe('web__take_screenshot');
  });

  it('reads the service field: the name’s prefix and what the service says of itself', () => {
    expect(index.search('gh').map((h) => h.tool.name)).toEqual(['gh__create_pull_request', 'gh__create_issue']);
    // Only the service's own words say "Chromium".
    expect(index.search('chromium').map((h) => h.tool.name)).toEqual(['web__take_screenshot']);
    expect(new ToolIndex(list, { separator: '__' }).search('chromium')).toEqual([]);
  });
});

describe('a query word no tool says', () => {
  const list = [
    { name: 'img__list_photographs', description: 'List the photographs of an album' },
    { name: 'fs__read_file', description: 'Read a file' },
  ];
  const index = new ToolIndex(list, { separator: '__' });

  it('meets the words that begin as it does, below a word the tool says', () => {
    // "photography" is said by no tool; "photographs" begins as it does.
    expect(index.search('photography').map((h) => h.tool.name)).toEqual(['img__list_photographs']);
    // A word a tool does say counts more than its kin.
    expect(index.search('photographs')[0]?.score).toBeGreaterThan(index.search('photography')[0]?.score ?? Infinity);
    // Five letters at least: a short word finds nothing by its beginning.
    expect(index.search('phot')).toEqual([]);
  });

  it('does not count a kin word in the coverage', () => {
    expect(index.search('photography')[0]?.coverage).toBe(0);
    expect(index.search('photographs')[0]?.coverage).toBe(1);
  });
});
