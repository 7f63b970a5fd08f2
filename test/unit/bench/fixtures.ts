import type { MachineInfo } from '../../../bench/machine.js';

/** A machine for report tests: fixed, so the rendered header is known. */
export const MACHINE: MachineInfo = {
  date: '2026-12-01T14:00:00.000Z',
  cpuModel: 'test cpu',
  cores: 2,
  memoryGiB: 4,
  loadAverage: [0, 0, 0],
  os: 'linux',
  node: 'v20',
  versions: { zeromq: '6.8.0', msgpackr: '2', '@nestjs/microservices': '12' },
  git: { commit: 'fdcad90', libDirty: true },
};
