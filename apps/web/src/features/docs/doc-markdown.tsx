import type { ComponentProps } from 'react';
import Markdown from 'react-markdown';
import { Link } from 'react-router';
import remarkGfm from 'remark-gfm';

/** Paths the server answers itself (API reference, OAuth endpoints): a full page load, not a console route. */
const SERVER_PATHS = /^\/(api|oauth2|\.well-known|proxy|group|metrics)(\/|$)/;

/** Tailwind has no typography plugin here: the elements get their looks from the container. */
const docClass = [
  'min-w-0 space-y-4 leading-7 break-words',
  '[&_h2]:mt-8 [&_h2]:border-b [&_h2]:border-slate-200 [&_h2]:pb-1 [&_h2]:text-xl [&_h2]:font-semibold dark:[&_h2]:border-slate-800',
  '[&_h3]:mt-6 [&_h3]:text-lg [&_h3]:font-semibold',
  '[&_a]:text-teal-700 [&_a]:underline [&_a]:underline-offset-2 dark:[&_a]:text-teal-400',
  '[&_ul]:list-disc [&_ul]:pl-6 [&_ol]:list-decimal [&_ol]:pl-6 [&_li]:my-1',
  '[&_code]:rounded [&_code]:bg-slate-100 [&_code]:px-1 [&_code]:font-mono [&_code]:text-[0.85em] [&_code]:[overflow-wrap:anywhere] dark:[&_code]:bg-slate-800',
  '[&_pre]:overflow-x-auto [&_pre]:rounded-md [&_pre]:bg-slate-100 [&_pre]:p-3 [&_pre]:text-sm [&_pre]:leading-6 dark:[&_pre]:bg-slate-800 [&_pre_code]:bg-transparent [&_pre_code]:p-0 [&_pre_code]:[overflow-wrap:normal]',
  '[&_blockquote]:border-l-4 [&_blockquote]:border-slate-300 [&_blockquote]:pl-3 [&_blockquote]:text-slate-600 dark:[&_blockquote]:border-slate-700 dark:[&_blockquote]:text-slate-400',
  '[&_table]:text-sm [&_th]:border [&_th]:border-slate-200 [&_th]:px-2 [&_th]:py-1 [&_th]:text-left [&_th]:align-top',
  '[&_td]:border [&_td]:border-slate-200 [&_td]:px-2 [&_td]:py-1 [&_td]:align-top dark:[&_td]:border-slate-800 dark:[&_th]:border-slate-800',
].join(' ');

type Props<T extends 'a' | 'pre' | 'table'> = ComponentProps<T> & { node?: unknown };

/** A console route stays in the console; a server path loads in full; anything else opens in a new tab. */
function DocLink({ node: _node, href, children, ...props }: Props<'a'>) {
  if (!href) return <span {...props}>{children}</span>;
  if (href.startsWith('/') && !SERVER_PATHS.test(href)) {
    return (
      <Link to={href} {...props}>
        {children}
      </Link>
    );
  }
  const external = /^https?:/i.test(href);
  return (
    <a href={href} {...props} {...(external ? { target: '_blank', rel: 'noopener noreferrer' } : {})}>
      {children}
    </a>
  );
}

/** Long commands and wide tables scroll in their own box, which the keyboard can reach (axe: scrollable-region-focusable). */
function Pre({ node: _node, ...props }: Props<'pre'>) {
  // biome-ignore lint/a11y/noNoninteractiveTabindex: a box that scrolls must be reachable to scroll it by keyboard
  return <pre tabIndex={0} {...props} />;
}

function Table({ node: _node, ...props }: Props<'table'>) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a box that scrolls must be reachable to scroll it by keyboard
    <div className="max-w-full overflow-x-auto" tabIndex={0}>
      <table {...props} />
    </div>
  );
}

/** One page of the user documentation: Markdown bundled with the console (GitHub flavour, no raw HTML). */
export function DocMarkdown({ markdown }: { markdown: string }) {
  return (
    <div className={docClass} data-testid="doc-body">
      <Markdown remarkPlugins={[remarkGfm]} components={{ a: DocLink, pre: Pre, table: Table }}>
        {markdown}
      </Markdown>
    </div>
  );
}
