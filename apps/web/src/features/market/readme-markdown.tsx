import type { ComponentProps } from 'react';
import Markdown from 'react-markdown';
import rehypeSanitize, { defaultSchema } from 'rehype-sanitize';
import remarkGfm from 'remark-gfm';
import { SAFE_URL_PROTOCOLS, safeUrl } from './safe-url';

/** GitHub's sanitising rules, with images allowed the same schemes as links (docs/console.md §5). */
const schema = {
  ...defaultSchema,
  protocols: { ...defaultSchema.protocols, href: [...SAFE_URL_PROTOCOLS], src: [...SAFE_URL_PROTOCOLS] },
};

/** Tailwind has no typography plugin here: the readme's elements get their looks from the container. */
const readmeClass = [
  'min-w-0 space-y-3 text-sm leading-6 break-words',
  '[&_h2]:mt-6 [&_h2]:text-xl [&_h2]:font-semibold [&_h3]:mt-6 [&_h3]:border-b [&_h3]:border-slate-200 [&_h3]:pb-1 [&_h3]:text-lg [&_h3]:font-semibold',
  '[&_h4]:mt-4 [&_h4]:font-semibold [&_h5]:mt-4 [&_h5]:font-medium [&_h6]:mt-4 [&_h6]:font-medium dark:[&_h3]:border-slate-800',
  '[&_a]:text-teal-700 [&_a]:underline-offset-2 hover:[&_a]:underline dark:[&_a]:text-teal-400',
  '[&_ul]:list-disc [&_ul]:pl-6 [&_ol]:list-decimal [&_ol]:pl-6 [&_li]:my-1',
  '[&_code]:rounded [&_code]:bg-slate-100 [&_code]:px-1 [&_code]:font-mono [&_code]:text-[0.85em] dark:[&_code]:bg-slate-800',
  '[&_pre]:overflow-x-auto [&_pre]:rounded-md [&_pre]:bg-slate-100 [&_pre]:p-3 dark:[&_pre]:bg-slate-800 [&_pre_code]:bg-transparent [&_pre_code]:p-0',
  '[&_blockquote]:border-l-4 [&_blockquote]:border-slate-300 [&_blockquote]:pl-3 [&_blockquote]:text-slate-600 dark:[&_blockquote]:border-slate-700 dark:[&_blockquote]:text-slate-400',
  '[&_table]:block [&_table]:max-w-full [&_table]:overflow-x-auto [&_th]:border [&_th]:border-slate-200 [&_th]:px-2 [&_th]:py-1 [&_th]:text-left',
  '[&_td]:border [&_td]:border-slate-200 [&_td]:px-2 [&_td]:py-1 dark:[&_td]:border-slate-800 dark:[&_th]:border-slate-800 [&_img]:inline [&_img]:max-w-full',
].join(' ');

type HeadingProps = ComponentProps<'h2'> & { node?: unknown };

/** The page has its own h1 (the package name): the readme's headings sit one level below it. */
const headings = {
  h1: ({ node: _node, ...props }: HeadingProps) => <h2 {...props} />,
  h2: ({ node: _node, ...props }: HeadingProps) => <h3 {...props} />,
  h3: ({ node: _node, ...props }: HeadingProps) => <h4 {...props} />,
  h4: ({ node: _node, ...props }: HeadingProps) => <h5 {...props} />,
  h5: ({ node: _node, ...props }: HeadingProps) => <h6 {...props} />,
};

/** Links of a readme leave the console: a new tab, with no opener and no referrer. */
function ReadmeLink({ node: _node, href, children, ...props }: ComponentProps<'a'> & { node?: unknown }) {
  if (!href) return <span {...props}>{children}</span>;
  const external = !href.startsWith('#');
  return (
    <a href={href} {...props} {...(external ? { target: '_blank', rel: 'noopener noreferrer' } : {})}>
      {children}
    </a>
  );
}

/**
 * A package readme rendered as Markdown (GitHub flavour). Raw HTML in it is not rendered, what remains
 * is sanitised, link and image addresses keep only safe schemes, and headings start at level 2.
 */
export function ReadmeMarkdown({ markdown }: { markdown: string }) {
  return (
    // The readme is the package's own text: the language checks leave it alone.
    <div className={readmeClass} data-testid="readme" data-i18n-data="">
      <Markdown
        remarkPlugins={[remarkGfm]}
        rehypePlugins={[[rehypeSanitize, schema]]}
        urlTransform={safeUrl}
        components={{ ...headings, a: ReadmeLink }}
      >
        {markdown}
      </Markdown>
    </div>
  );
}
