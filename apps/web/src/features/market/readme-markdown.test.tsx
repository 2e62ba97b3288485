import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { ReadmeMarkdown } from './readme-markdown';

const hrefOf = (name: string) => screen.getByText(name).closest('a')?.getAttribute('href') ?? '';

describe('readme rendered as Markdown (docs/console.md §2.10, §5)', () => {
  it('renders GitHub-flavoured Markdown: headings, tables, code and task lists', () => {
    render(
      <ReadmeMarkdown
        markdown={[
          '# Echo server',
          '',
          '| Tool | What |',
          '| ---- | ---- |',
          '| `echo` | answers |',
          '',
          '```json',
          '{"env": {"TOKEN": "<your-token>"}}',
          '```',
          '',
          '- [x] done',
        ].join('\n')}
      />,
    );
    // One level below the page's own heading.
    expect(screen.getByRole('heading', { level: 2, name: 'Echo server' })).toBeInTheDocument();
    expect(screen.getByRole('table')).toBeInTheDocument();
    expect(screen.getByRole('cell', { name: 'echo' })).toBeInTheDocument();
    expect(screen.getByText('{"env": {"TOKEN": "<your-token>"}}')).toBeInTheDocument();
    expect(screen.getByRole('checkbox')).toBeChecked();
  });

  it('keeps links without a scheme or with a safe one, and blanks the others', () => {
    render(
      <ReadmeMarkdown
        markdown={[
          '[web](https://example.com/docs) [mail](mailto:a@example.com) [chat](ircs://irc.example.com/mcp) [im](xmpp:a@example.com)',
          '[relative](./docs/setup.md) [anchor](#setup)',
          '[script](javascript:alert(1)) [data](data:text/html,hi) [vb](vbscript:msgbox)',
        ].join('\n\n')}
      />,
    );
    expect(hrefOf('web')).toBe('https://example.com/docs');
    expect(hrefOf('mail')).toBe('mailto:a@example.com');
    expect(hrefOf('chat')).toBe('ircs://irc.example.com/mcp');
    expect(hrefOf('im')).toBe('xmpp:a@example.com');
    expect(hrefOf('relative')).toBe('./docs/setup.md');
    expect(hrefOf('anchor')).toBe('#setup');
    for (const name of ['script', 'data', 'vb']) expect(hrefOf(name)).toBe('');
  });

  it('opens outside links in a new tab without an opener', () => {
    render(<ReadmeMarkdown markdown="[web](https://example.com) [here](#top)" />);
    expect(screen.getByRole('link', { name: 'web' })).toHaveAttribute('target', '_blank');
    expect(screen.getByRole('link', { name: 'web' })).toHaveAttribute('rel', 'noopener noreferrer');
    expect(screen.getByRole('link', { name: 'here' })).not.toHaveAttribute('target');
  });

  it('applies the same rule to image addresses', () => {
    render(
      <ReadmeMarkdown
        markdown={
          '![logo](https://example.com/logo.png) ![local](./logo.png) ![bad](javascript:alert(1)) ![inline](data:image/png;base64,AAAA)'
        }
      />,
    );
    expect(screen.getByRole('img', { name: 'logo' })).toHaveAttribute('src', 'https://example.com/logo.png');
    expect(screen.getByRole('img', { name: 'local' })).toHaveAttribute('src', './logo.png');
    expect(screen.getByRole('img', { name: 'bad' }).getAttribute('src') ?? '').toBe('');
    expect(screen.getByRole('img', { name: 'inline' }).getAttribute('src') ?? '').toBe('');
  });

  it('does not render raw HTML from the readme', () => {
    const { container } = render(
      <ReadmeMarkdown markdown={'<script>window.hacked = true</script>\n\n<img src=x onerror="alert(1)">\n\nText'} />,
    );
    expect(container.querySelector('script')).toBeNull();
    expect(container.querySelector('[onerror]')).toBeNull();
    expect(screen.getByText('Text')).toBeInTheDocument();
  });
});
