// The services room's door (decision 0047): what other rooms use of it.
export { ClientSnippets } from './client-snippets';
export { clientIds, clientSnippet, DEFAULT_ENDPOINT_TYPE, type EndpointType, gatewayHost } from './endpoint-config';
export { EndpointSection, EndpointTypeChoice } from './endpoint-section';
export { OpenApiSection } from './openapi-section';
export { servicesRoutes } from './routes';
export { gridClass } from './service-grid';
export { serviceTitle } from './service-view-props';
export { useCopy } from './use-copy';

/** Custom Install, loaded when first opened (the Market page offers it too). */
export const loadCustomInstallDialog = () => import('./custom-install-dialog');
