#!/usr/bin/env node
// A stdio tool server that cannot start, as a misconfigured one fails: it throws before reading stdin, so
// Node prints the error with its stack trace on stderr and exits with code 1 (e2e/support/real-data.ts).

function openKnowledgeBase(url) {
  throw new Error(`connect ECONNREFUSED: the knowledge base at ${url} refused the connection`);
}

function start() {
  openKnowledgeBase(process.env.KNOWLEDGE_BASE_URL ?? 'postgres://kb.internal:5432/documents');
}

start();
