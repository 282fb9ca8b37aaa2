"""Sampled manual review: export samples, measure agreement, estimate error rates, feed labels back.

``sample`` draws a stratified, hashed-id sample; ``export`` writes it for people (CSV, JSONL, Label
Studio, HTML); ``agree`` measures inter-annotator agreement; ``estimate`` turns adjudicated labels
into precision / miss-rate estimates with Wilson intervals; ``to_train`` writes training JSONL;
``steps`` runs those on a batch's files for ``spcl review`` (whose module only parses and calls).
"""
