"""Category lexicons (ja/ko/en) used as dense, generalising features of the screen.

Each entry maps a category (MEDICAL, CRIME, DISABILITY, OTHER) or a cue kind (PERSON: words that
point at a specific individual; GENERIC: words that point at general discussion or fiction) to
surface terms. The lexicon is written into every model artifact as ``lexicon.json``, so a trained
model always runs with the lexicon it was trained on; this module only holds the default used by
``spcl train``. Matching is done by :class:`spcl.screen.features.Featurizer` on integer keys (no
regular expressions): Japanese/Korean terms as substrings (their first three characters), Latin
terms as whole tokens.
"""

from __future__ import annotations

LEXICON_KINDS: tuple[str, ...] = ("MEDICAL", "CRIME", "DISABILITY", "OTHER", "PERSON", "GENERIC")
"""Feature order of the lexicon counts (one dense column each)."""

_JA = {
    "MEDICAL": (
        "病気 病院 入院 退院 手術 治療 診断 療養 闘病 疾患 症状 発症 罹患 感染 癌 がん 腫瘍 白血病 "
        "肺炎 心筋梗塞 脳梗塞 脳出血 脳卒中 糖尿病 認知症 うつ病 鬱病 統合失調症 精神疾患 精神科 "
        "心臓病 骨折 負傷 怪我 けが 重傷 軽傷 靭帯 肝炎 結核 エイズ HIV 病死 病没 急逝 急死 容態 "
        "持病 自殺 体調 難病 依存症 薬物依存 アルコール依存 不妊 流産 妊娠 出産 介護 リハビリ 摘出 "
        "移植 透析 抗がん剤 医師 看護 患者 病棟 ICU 集中治療 感染症 ウイルス 発熱 療法 休養 入院中 "
        "病状 死因 合併症 心臓発作 発作 疾病 精神病 医療 薬物 副作用 症候群 整形 診療"
    ),
    "CRIME": (
        "逮捕 容疑 容疑者 被疑者 被告 被告人 起訴 不起訴 書類送検 送検 判決 有罪 無罪 懲役 禁錮 "
        "罰金 執行猶予 実刑 死刑 服役 刑務所 拘置所 収監 釈放 保釈 前科 犯罪 犯行 事件 殺人 殺害 "
        "傷害 暴行 強盗 窃盗 詐欺 横領 贈賄 収賄 汚職 脱税 覚醒剤 麻薬 大麻 密輸 誘拐 監禁 放火 "
        "強姦 性的暴行 虐殺 刑事 弁護 摘発 犯人 自首 盗難 虐待 暴力 処罰 殺人罪 容疑 わいせつ "
        "ストーカー 脅迫 恐喝 被害者 遺族 警察 検察 地検 警視庁 県警 取り調べ 捜査 指名手配 告訴 "
        "告発 公判 裁判 控訴 上告 懲戒 暗殺 射殺 刺殺 襲撃 テロ 処刑 投獄 拷問"
    ),
    "DISABILITY": (
        "障害 障がい 障碍 障害者 身体障害 知的障害 発達障害 精神障害 自閉症 ADHD 聴覚障害 視覚障害 "
        "難聴 全盲 失明 車椅子 車いす 義足 義手 麻痺 四肢 手帳 障害者手帳 ダウン症 盲目 聾 ろう者 "
        "特別支援 介助 寝たきり 後遺症 ハンディキャップ パラリンピック"
    ),
    "OTHER": (
        "宗教 信仰 信者 信徒 教徒 キリスト教 仏教 イスラム教 ムスリム 創価学会 統一教会 カトリック "
        "プロテスタント 洗礼 改宗 牧師 僧侶 神父 人種 民族 在日 朝鮮籍 帰化 国籍 被差別部落 部落 "
        "同性愛 ゲイ レズビアン バイセクシュアル トランスジェンダー LGBT 性的指向 性同一性障害 "
        "カミングアウト 出自 差別 門地 アイヌ 琉球 生活保護 貧困 孤児 宗派 神道 白人 黒人"
    ),
    "PERSON": (
        "さん 氏 容疑者 被告 選手 監督 議員 知事 市長 社長 元 夫 妻 息子 娘 父 母 兄 姉 弟 妹 "
        "私 僕 俺 自分 うち 本人 歳 才 当時"
    ),
    "GENERIC": (
        "一般 全国 統計 割合 件数 人口 制度 法律 法 条例 政策 対策 予防 研究 患者数 症例 ドラマ "
        "映画 小説 作品 主人公 登場人物 物語 漫画 アニメ ゲーム 架空 シリーズ 第 話 巻"
    ),
}

_KO = {
    "MEDICAL": (
        "질병 질환 병원 입원 퇴원 수술 치료 진단 투병 발병 증상 감염 확진 암 폐암 위암 간암 유방암 "
        "자살 백혈병 종양 폐렴 심근경색 뇌졸중 뇌출혈 당뇨 치매 우울증 공황장애 조현병 정신질환 "
        "정신과 골절 부상 다쳐 다친 중상 경상 인대 재활 간염 결핵 에이즈 HIV 병사 지병 성형 통증 "
        "진료 약물 부작용 심장 발작 증후군 의료 난치병 중독 마약중독 알코올중독 불임 유산 임신 "
        "출산 간병 이식 투석 항암 의사 간호 환자 병동 중환자실 응급실 코로나 바이러스 발열 요양 "
        "후유증 합병증 건강 악화 의식불명"
    ),
    "CRIME": (
        "체포 혐의 용의자 피의자 피고 피고인 기소 불기소 송치 판결 유죄 무죄 징역 금고 벌금 "
        "집행유예 실형 사형 복역 교도소 구치소 수감 석방 보석 전과 범죄 범행 사건 살인 살해 상해 "
        "폭행 강도 투약 도주 난동 학대 테러 살인마 범인 흉기 폭력 성범죄 처벌 형사 법정 변호인 "
        "출소 가석방 절도 사기 횡령 뇌물 수뢰 배임 탈세 마약 필로폰 대마 밀수 유괴 감금 방화 강간 "
        "성폭행 성추행 추행 스토킹 협박 공갈 피해자 유족 경찰 검찰 지검 수사 구속 입건 영장 수배 "
        "고소 고발 공판 재판 항소 상고 선고 구형 검거 붙잡 음주운전 뺑소니 도박 몰카 불법촬영 "
        "보이스피싱"
    ),
    "DISABILITY": (
        "장애 장애인 장애아 지체장애 지적장애 발달장애 정신장애 자폐 자폐증 ADHD 청각장애 시각장애 "
        "난청 실명 휠체어 의족 의수 마비 하반신 전신마비 장애등급 장애인등록 다운증후군 "
        "농인 맹인 특수학교 특수교육 활동보조 패럴림픽 장애우"
    ),
    "OTHER": (
        "종교 신앙 신자 교인 신도 기독교 불교 천주교 이슬람 무슬림 개신교 교회 사찰 성당 목사 승려 "
        "신부 세례 개종 신천지 인종 민족 조선족 탈북 탈북자 새터민 귀화 국적 다문화 동성애 게이 "
        "레즈비언 양성애 트랜스젠더 성소수자 성적지향 커밍아웃 차별 기초생활수급 수급자 고아 동성 "
        "흑인 백인 인종차별"
    ),
    "PERSON": (
        "씨 모씨 모 군 양 선수 감독 의원 시장 지사 대표 회장 전 남편 아내 아들 딸 아버지 어머니 "
        "엄마 아빠 형 누나 오빠 언니 동생 할머니 할아버지 나 내 저 제 우리 본인 세 살"
    ),
    "GENERIC": (
        "일반 전국 통계 비율 건수 인구 제도 법률 법 조례 정책 대책 예방 연구 환자수 사례 드라마 "
        "영화 소설 작품 주인공 등장인물 줄거리 만화 애니 게임 가상 시리즈 연기 배우 캐릭터"
    ),
}

_EN = {
    "MEDICAL": (
        "illness sick disease hospital hospitalized hospitalised surgery operation treatment"
        " diagnosed diagnosis cancer tumor tumour leukemia pneumonia stroke heart_attack diabetes"
        " dementia alzheimer depression anxiety schizophrenia bipolar psychiatric mental_health"
        " rehab injury injured fracture torn_ligament hepatitis tuberculosis hiv aids chemotherapy"
        " therapy transplant dialysis patient clinic icu coma symptoms infection infected covid"
        " virus addiction overdose pregnant pregnancy miscarriage infertility medication prescribed"
        " doctor nurse died_of suicide seizure syndrome"
    ),
    "CRIME": (
        "arrest arrested suspect accused charged indicted indictment defendant trial convicted"
        " conviction guilty acquitted sentenced sentence prison jail imprisoned inmate parole"
        " probation bail criminal_record crime murder murdered killed assault robbery theft"
        " burglary fraud embezzlement bribery bribe tax_evasion drug_trafficking smuggling"
        " kidnapping arson rape raped sexual_assault harassment stalking extortion victim police"
        " prosecutor prosecuted investigation detectives custody warrant felony misdemeanor dui"
        " manslaughter homicide stabbed shot abuse abused terrorism terrorist killer criminal"
        " violence violent"
    ),
    "DISABILITY": (
        "disability disabled disabilities handicapped impairment impaired deaf blind blindness"
        " wheelchair paralyzed paralysed paraplegic quadriplegic amputee prosthetic autism autistic"
        " adhd down_syndrome cerebral_palsy intellectual_disability learning_disability"
        " hearing_loss special_needs paralympic sign_language"
    ),
    "OTHER": (
        "religion religious faith christian catholic protestant muslim islam jewish judaism"
        " buddhist hindu atheist church mosque synagogue temple baptized converted race racial"
        " ethnicity ethnic immigrant refugee citizenship gay lesbian bisexual transgender lgbt"
        " lgbtq queer sexual_orientation  came_out caste welfare homeless orphan discrimination"
        " racism racist"
    ),
    "PERSON": (
        "mr mrs ms dr my_mother my_father my_son my_daughter my_wife my_husband my_brother"
        " my_sister my_grandmother my_grandfather i i'm i've me myself aged year-old years_old he"
        " she his her"
    ),
    "GENERIC": (
        "statistics rate percent nationwide law policy research study studies prevention awareness "
        "campaign novel film movie series character protagonist fictional episode season plot"
    ),
}


def default_lexicon() -> dict[str, dict[str, list[str]]]:
    """The default lexicon: ``{lang: {kind: [term, ...]}}`` for ``ja``, ``ko`` and ``en``."""
    out: dict[str, dict[str, list[str]]] = {}
    for lang, table in (("ja", _JA), ("ko", _KO), ("en", _EN)):
        # Terms are space-separated; "_" joins the words of a multi-word term ("heart_attack").
        out[lang] = {
            kind: sorted({w.replace("_", " ") for w in words.split()})
            for kind, words in table.items()
        }
    return out
