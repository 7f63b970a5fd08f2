import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { ZLinkOptions } from '../core/options/index.js';

/** @internal */
export const {
  ConfigurableModuleClass: ZLinkConfigurableModule,
  MODULE_OPTIONS_TOKEN: ZLINK_MODULE_OPTIONS,
  OPTIONS_TYPE: ZLINK_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: ZLINK_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ZLinkOptions>({ moduleName: 'ZLink' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
