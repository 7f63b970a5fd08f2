import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import * as zmq from 'zeromq';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

@Injectable()
class Svc { hi() { return 'hi'; } }
@Module({ providers: [Svc] })
class M {}

describe('smoke', () => {
  it('zmq round trip', async () => {
    const r = new zmq.Router(); await r.bind('tcp://127.0.0.1:*');
    const d = new zmq.Dealer(); d.connect(r.lastEndpoint!);
    await d.send('x');
    const [, m] = await r.receive();
    expect(m.toString()).toBe('x');
    r.close(); d.close();
  });
  it('nest', async () => {
    const app = await NestFactory.createApplicationContext(M, { logger: false });
    expect(app.get(Svc).hi()).toBe('hi');
    await app.close();
  });
});
