// The marketplace and services modules still import the API type from here; every other module takes it from http/api.ts.
export type { ZodApi } from '../http/api.js';
