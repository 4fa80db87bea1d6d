package live

// Forget drops what Streams keeps of a topic once nobody will receive it
// again: its sticky messages and the sequence of its last message. A topic
// of its own per background job (handlers/replay) would otherwise leave
// both behind for every job for as long as the process runs.
func (s *Streams) Forget(topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.lastSeq, topic)
	for k := range s.sticky {
		if k.topic == topic {
			delete(s.sticky, k)
		}
	}
}
