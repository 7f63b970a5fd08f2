export { ClientChannel, type ChannelSubmit, type ClientChannelConfig } from './client-channel.js';
export { ServerConnection } from './server-connection.js';
export { ServerListener, type ServerListenerConfig } from './server-listener.js';
